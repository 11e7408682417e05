"""``medkg serve``: the HTTP API (FastAPI) and the review page over one workspace.

- :mod:`medkg.server.access`: bearer tokens (``tokens.json``, mode 0600, made
  at ``medkg init``) and the server file that tells other medkg commands a
  server owns the workspace;
- :mod:`medkg.server.app`: the app; every ``/api`` endpoint is behind a token;
- ``page/``: the review page (static HTML, CSS and JavaScript; it holds no data
  and reads everything through the API with the curator's token).
"""
