"""View models of the HTML pages, one module per page: what each page shows, built from the
services. Routes in ``app.web.routers.pages`` parse the request, call one function here and render
its dictionary; nothing here knows about requests or templates."""
