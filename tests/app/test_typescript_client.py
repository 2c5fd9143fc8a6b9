"""A TypeScript client generated from the live schema by openapi-typescript (through npm)
type-checks, and types the upload's file as a Blob (a browser File passes, text does not), the
run defaults as optional (issue 25). openapi-typescript reads ``format: binary`` as a string
unless told otherwise; its documented transform makes it a Blob, and ``defaultNonNullable:
false`` keeps the fields with defaults optional, as the server treats them (``GENERATE``).
Skipped without npm; slow (an npm install)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from service_helpers import make_settings, serve

pytestmark = pytest.mark.slow

PACKAGES = ["openapi-typescript@7", "typescript@5"]

GENERATE = """
import fs from "node:fs";
import ts from "typescript";
import openapiTS, { astToString } from "openapi-typescript";

const BLOB = ts.factory.createTypeReferenceNode(ts.factory.createIdentifier("Blob"));
const NULL = ts.factory.createLiteralTypeNode(ts.factory.createNull());
const schema = JSON.parse(fs.readFileSync("openapi.json", "utf8"));
const ast = await openapiTS(schema, {
  // A field with a default may be left out of a request (openapi-typescript would require it).
  defaultNonNullable: false,
  transform(node) {
    if (node.format === "binary") {
      return node.nullable ? ts.factory.createUnionTypeNode([BLOB, NULL]) : BLOB;
    }
  },
});
fs.writeFileSync("schema.d.ts", astToString(ast));
"""

CLIENT = """
import type { components, paths } from "./schema";

type Upload = NonNullable<
  paths["/api/datasets"]["post"]["requestBody"]
>["content"]["multipart/form-data"];
type RunCreate = components["schemas"]["RunCreate"];

const csv = new File(["y,a\\n1,2\\n"], "data.csv", { type: "text/csv" });
export const fromFile: Upload["file"] = csv;
export const fromBlob: Upload["file"] = new Blob(["y,a\\n1,2\\n"]);
// @ts-expect-error a CSV's text is no file
export const fromText: Upload["file"] = "y,a\\n1,2\\n";
export const upload: Pick<Upload, "file" | "target"> = { file: csv, target: "y" };

// The defaults every door shares: objective, k, test_fraction may be left out.
export const run: RunCreate = { dataset_id: 1, algorithm: "foba-obj" };
// @ts-expect-error the algorithm is required
export const noAlgorithm: RunCreate = { dataset_id: 1 };
export const stored: components["schemas"]["RunPublic"]["objective"] = "logistic";
"""


def npm(args: list[str], where: Path) -> None:
    done = subprocess.run(
        ["npm", *args], cwd=where, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_a_typescript_client_types_the_upload_as_a_file(tmp_path: Path) -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    with serve(make_settings(tmp_path / "data")) as client:
        schema = client.get("/openapi.json").json()
    where = tmp_path / "client"
    where.mkdir()
    (where / "openapi.json").write_text(json.dumps(schema))
    (where / "package.json").write_text('{"private": true, "type": "module"}')
    (where / "generate.mjs").write_text(GENERATE)
    (where / "client.ts").write_text(CLIENT)
    npm(["install", "--no-audit", "--no-fund", "--loglevel=error", *PACKAGES], where)
    subprocess.run(["node", "generate.mjs"], cwd=where, check=True, timeout=120)
    generated = (where / "schema.d.ts").read_text()
    assert "file: Blob" in generated
    check = ["exec", "--", "tsc", "--noEmit", "--strict", "--target", "es2022"]
    check += ["--lib", "es2022,dom", "--module", "esnext", "--moduleResolution", "bundler"]
    npm([*check, "client.ts"], where)
