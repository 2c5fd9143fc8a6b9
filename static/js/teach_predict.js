// "Predict first" on the teaching page (issue 27): at each step a student can predict (the
// classroom's questions, embedded in the frames by views/teach.py as frame.question, built
// by services/classroom.py and views/reveal.py), the player stops before revealing the step
// and asks; a pick reveals it, with the numbers that decide it and, for a wrong pick, why it
// lost. The running score ("3 of 4 right") is the page's: nothing is sent to the server.
// The switch is kept in the URL (?predict=1), so a link opens in it.
//
//   const predict = predictor(panel, () => player);
//   predict.frame(frame, index, data)   after the page has drawn a frame: ask, or reveal
//   predict.ticks(data)                 hide the timeline's ticks of unanswered questions

const PARAM = "predict";

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function predictOn() {
  const value = new URLSearchParams(window.location.search).get(PARAM);
  return value === "1" || value === "true";
}

function keepInURL(on) {
  const url = new URL(window.location.href);
  if (on) url.searchParams.set(PARAM, "1");
  else url.searchParams.delete(PARAM);
  history.replaceState(history.state, "", url);
}

export function predictor(panel, getPlayer) {
  const q = (selector) => panel.querySelector(selector);
  const box = q(".predict-box");
  const toggle = q("#predict-first");
  const score = q(".predict-score");
  const picks = new Map();  // frame index -> the student's pick
  let shown = null;  // [frame, index, data] drawn last
  if (!box || !toggle) return { frame() {}, ticks() {}, destroy() {} };
  toggle.checked = predictOn();

  const asking = (f, index) => toggle.checked && f.question && !picks.has(index);

  function drawScore() {
    const answered = [...picks.entries()];
    const data = shown && shown[2];
    const right = data ? answered.filter(([i, pick]) => data.frames[i].question.answer === pick).length : 0;
    score.hidden = !toggle.checked || !answered.length;
    score.textContent = `${right} of ${answered.length} right`;
    score.dataset.right = String(right);
    score.dataset.answered = String(answered.length);
  }

  function ask(f, index, data) {
    const question = f.question;
    const before = index > 0 ? data.supports[data.frames[index - 1].support] || [] : [];
    const names = before.map((j) => data.names[j] ?? `feature ${j}`);
    q(".predict-before").textContent = `Step ${f.step} · selected now: ${names.join(", ") || "none"}`;
    q(".predict-prompt").textContent = question.prompt;
    const buttons = question.choices.map(([value, label], i) => {
      const b = el("button", "choice", label);
      b.type = "button";
      b.dataset.choice = value;
      b.setAttribute("aria-keyshortcuts", String(i + 1));
      b.title = `${label} (key ${i + 1})`;
      return b;
    });
    q(".predict-choices").replaceChildren(...buttons);
    q(".predict-choices").hidden = false;
    q(".predict-reveal").replaceChildren();
  }

  // The reveal: right or wrong, why the pick lost, the rule with the deciding numbers
  // (scores, or deletion costs against nu x delta) and every choice's number.
  function reveal(f, pick) {
    const question = f.question;
    const right = pick === question.answer;
    const out = q(".predict-reveal");
    out.tabIndex = -1;
    out.className = `predict-reveal ${right ? "right" : "wrong"}`;
    const verdict = el("p", "answer");
    verdict.append("Answer: ", el("strong", "", question.answer), right ? " · you were right" : ` · you said ${pick}`);
    const parts = [verdict];
    if (!right && question.lost[pick]) parts.push(el("p", "lost", question.lost[pick]));
    parts.push(el("p", "rule", question.rule));
    const table = el("table", "data compact nums");
    const head = el("tr");
    head.append(el("th", "", "feature"), el("th", "", question.label));
    table.append(head, ...question.rows.map((r) => {
      const row = el("tr", `${r.right ? "right" : ""}${r.choice === pick ? " picked" : ""}`);
      row.append(el("td", "", r.choice), el("td", "num", r.value));
      return row;
    }));
    parts.push(table);
    out.replaceChildren(...parts);
    q(".predict-prompt").textContent = question.prompt;
    q(".predict-choices").hidden = true;
  }

  function frame(f, index, data) {
    shown = [f, index, data];
    const now = asking(f, index);
    panel.classList.toggle("asking", Boolean(now));
    box.hidden = !(toggle.checked && f.question);
    if (now) {
      getPlayer()?.pause();  // playing stops at a question
      ask(f, index, data);
    } else if (toggle.checked && f.question) {
      reveal(f, picks.get(index));
    }
    ticks(data);
    drawScore();
  }

  // The timeline's ticks name the feature each step moves: not before the student picked.
  function ticks(data) {
    panel.querySelectorAll(".timeline a[data-index]").forEach((a) => {
      const i = Number(a.dataset.index);
      const g = data.frames[i];
      if (asking(g, i)) {
        a.textContent = "?";
        a.title = `step ${g.step}: predict it first`;
        // Its kind's colour would tell a deletion from a check: a neutral tick.
        a.className = `tick unasked${a.classList.contains("current") ? " current" : ""}`;
      }
    });
  }

  function choose(value) {
    if (!shown) return;
    const [f, index] = shown;
    if (!asking(f, index)) return;
    const hadFocus = box.contains(document.activeElement);
    picks.set(index, value);
    // Drawn again through the player, so the page shows the step itself with the reveal.
    getPlayer()?.show(index);
    if (hadFocus) q(".predict-reveal").focus();  // keyboard users land on what was revealed
  }

  function onClick(e) {
    const b = e.target.closest(".predict-choices button[data-choice]");
    if (b && panel.contains(b)) choose(b.dataset.choice);
  }

  // Keys 1-9 pick a choice while a question is asked (buttons take Tab and Enter too).
  function onKey(e) {
    if (e.altKey || e.ctrlKey || e.metaKey || e.target.closest("input, select, textarea")) return;
    if (!shown || !asking(shown[0], shown[1]) || !/^[1-9]$/.test(e.key)) return;
    const choice = shown[0].question.choices[Number(e.key) - 1];
    if (!choice) return;
    e.preventDefault();
    choose(choice[0]);
  }

  function onToggle() {
    keepInURL(toggle.checked);
    const player = getPlayer();
    if (player) player.show(player.index());
  }

  panel.addEventListener("click", onClick);
  toggle.addEventListener("change", onToggle);
  document.addEventListener("keydown", onKey);
  return {
    frame,
    ticks,
    destroy() {
      panel.removeEventListener("click", onClick);
      toggle.removeEventListener("change", onToggle);
      document.removeEventListener("keydown", onKey);
    },
  };
}
