"""The pages every server in the bench is driven against, served on 127.0.0.1 by the bench itself.

Own pages (a login form, a todo app, a long article, a 2,000-row table, a page with iframes, and
generated pages of N elements) are built here, deterministically, so that every server sees the
same bytes. Real documents come from Debian's python3-doc when it is installed (served under
/pydocs/); without it those pages are skipped and the report says so.
"""

from __future__ import annotations

import html
import os
import random
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

PYDOCS_DIRS = (Path("/usr/share/doc/python3-doc/html"), Path("/usr/share/doc/python3/html"))
#: Real documents, by label: a short index page, a mid-size reference and a very long one.
PYDOC_PAGES = {"pydoc-tutorial": "tutorial/introduction.html", "pydoc-functions": "library/functions.html",
               "pydoc-stdtypes": "library/stdtypes.html"}

_STYLE = "<style>body{font-family:sans-serif;max-width:60em;margin:1em auto} td,th{padding:2px 6px}</style>"


def _doc(title: str, body: str, script: str = "") -> str:
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{html.escape(title)}</title>{_STYLE}</head>"
            f"<body>{body}{f'<script>{script}</script>' if script else ''}</body></html>")


def login_page() -> str:
    body = """<h1>Sign in</h1>
<form action="/welcome" method="get">
 <label>Username <input name="user" autocomplete="off"></label><br>
 <label>Password <input name="password" type="password"></label><br>
 <label><input type="checkbox" name="remember"> Remember me</label><br>
 <button type="submit">Sign in</button> <a href="/forgot">Forgot password?</a>
</form>"""
    return _doc("Sign in", body)


def welcome_page(user: str) -> str:
    return _doc("Welcome", f"<h1>Welcome, {html.escape(user or 'guest')}</h1><p>You are signed in.</p><a href='/login'>Sign out</a>")


def todo_page() -> str:
    body = """<h1>Todos</h1>
<input id="new" placeholder="What needs to be done?" aria-label="New todo">
<button id="add">Add</button>
<ul id="list"></ul><p id="count">0 items</p>"""
    script = """
const list = document.getElementById('list'), input = document.getElementById('new');
let n = 0;
function add() {
  const text = input.value.trim(); if (!text) return;
  const li = document.createElement('li'); n++;
  li.innerHTML = `<label><input type=checkbox> ${text}</label> <button>Delete</button>`;
  li.querySelector('button').onclick = () => { li.remove(); n--; count(); };
  list.appendChild(li); input.value = ''; count();
}
function count() { document.getElementById('count').textContent = n + ' items'; }
document.getElementById('add').onclick = add;
input.addEventListener('keydown', e => { if (e.key === 'Enter') add(); });
for (const t of ['Buy milk', 'Write report', 'Call Alice']) { input.value = t; add(); }
"""
    return _doc("Todos", body, script)


_WORDS = ("the browser agent page element snapshot token latency session memory context process network "
          "reply model tool click type navigate frame table row column article heading paragraph link "
          "server client benchmark median figure result window document script style").split()


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(_WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def article_page() -> str:
    rng = random.Random(7)
    parts = ["<header><nav><a href='/'>Home</a> · <a href='/article'>Articles</a> · <a href='/about'>About</a></nav></header>",
             "<main><article><h1>A long article about browsers for agents</h1>"]
    for section in range(1, 25):
        parts.append(f"<h2 id=s{section}>Section {section}</h2>")
        for _ in range(6):
            sentences = " ".join(_sentence(rng, rng.randint(8, 20)) for _ in range(5))
            parts.append(f"<p>{sentences} See <a href='#s{rng.randint(1, 24)}'>section {rng.randint(1, 24)}</a>.</p>")
    parts.append("</article></main><footer><p>© bench</p></footer>")
    return _doc("A long article", "".join(parts))


def table_page(rows: int = 2000) -> str:
    rng = random.Random(11)
    out = ["<h1>Orders</h1><table><thead><tr><th>#</th><th>Customer</th><th>City</th><th>Amount</th><th>Status</th></tr></thead><tbody>"]
    for i in range(1, rows + 1):
        out.append(f"<tr><td>{i}</td><td>{rng.choice(_WORDS).title()} {rng.choice(_WORDS).title()}</td>"
                   f"<td>{rng.choice(_WORDS).title()}</td><td>{rng.randint(1, 99999) / 100:.2f}</td>"
                   f"<td>{rng.choice(('paid', 'open', 'late'))}</td></tr>")
    out.append("</tbody></table>")
    return _doc("Orders", "".join(out))


def frames_page() -> str:
    body = """<h1>Frames</h1><p>Three embedded documents.</p>
<iframe src="/login" title="Login frame" width=600 height=260></iframe>
<iframe src="/todo" title="Todo frame" width=600 height=300></iframe>
<iframe srcdoc="<p>Inline frame with <a href='/article'>a link</a> and <button>a button</button></p>" title="Inline frame"></iframe>"""
    return _doc("Frames", body)


def generated_page(elements: int) -> str:
    """About ``elements`` DOM elements: sections of headings, text, links, buttons, inputs and lists."""
    rng = random.Random(elements)
    out: list[str] = [f"<h1>Generated page with {elements} elements</h1>"]
    count = 0
    block = 0
    while count < elements:
        block += 1
        out.append(f"<section><h2>Block {block}</h2><p>{_sentence(rng, 10)}</p>"
                   f"<div><a href='#b{block}'>Link {block}</a> <button>Action {block}</button>"
                   f"<input aria-label='Field {block}'></div><ul>"
                   + "".join(f"<li><span>{rng.choice(_WORDS)} {block}.{i}</span></li>" for i in range(4))
                   + "</ul></section>")
        count += 17  # section, h2, p, div, a, button, input, ul, 4×(li, span), +1 slack for text runs
    return _doc(f"Generated {elements}", "".join(out))


def workers_page() -> str:
    """A page that starts a dedicated worker, a shared worker and registers a service worker at load, as
    apps with telemetry or a code editor do (issue 38: such pages' navigates waited for the worker
    scripts until the wait's cap)."""
    body = "<h1>Workers</h1><p id=state>starting</p><button>Refresh</button>"
    script = """new Worker('/worker.js'); new SharedWorker('/shared-worker.js');
navigator.serviceWorker && navigator.serviceWorker.register('/sw.js').catch(() => {});
document.getElementById('state').textContent = 'workers started';"""
    return _doc("Workers", body, script)


#: The workers' scripts: each answers at once and then lives on, as real workers do.
WORKER_SCRIPTS = {
    "/worker.js": "setInterval(() => postMessage('tick'), 5000);",
    "/shared-worker.js": "onconnect = (event) => event.ports[0].postMessage('hello');",
    "/sw.js": "self.addEventListener('install', () => self.skipWaiting());",
}


def pydocs_root() -> Path | None:
    for folder in PYDOCS_DIRS:
        if (folder / "index.html").exists():
            return folder
    return None


class _Handler(SimpleHTTPRequestHandler):
    pages: dict[str, str] = {}
    pydocs: Path | None = None

    def log_message(self, *_: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urlparse(self.path)
        if url.path.startswith("/pydocs/") and self.pydocs is not None:
            self.path = self.path[len("/pydocs"):]
            return super().do_GET()
        query = parse_qs(url.query)
        if url.path == "/welcome":
            body = welcome_page(query.get("user", [""])[0])
        elif url.path == "/gen":
            body = generated_page(min(int(query.get("n", ["1000"])[0]), 200_000))
        elif url.path == "/favicon.ico":  # no 404 in anyone's console
            self.send_response(204)
            self.end_headers()
            return
        elif url.path in WORKER_SCRIPTS:
            data = WORKER_SCRIPTS[url.path].encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/javascript")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        else:
            body = self.pages.get(url.path) or _doc("Page", f"<h1>{html.escape(url.path)}</h1><a href='/login'>Login</a>")
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)


class PageServer:
    """The bench's own web server on 127.0.0.1 (a free port), in a thread."""

    def __init__(self, port: int = 0) -> None:
        self.pydocs = pydocs_root()
        pages = {"/login": login_page(), "/todo": todo_page(), "/article": article_page(),
                 "/table": table_page(), "/frames": frames_page(), "/workers": workers_page(), "/": _doc("Bench", "<h1>Bench</h1>")}
        handler = type("Handler", (_Handler,), {"pages": pages, "pydocs": self.pydocs})
        directory = str(self.pydocs) if self.pydocs else os.getcwd()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), partial(handler, directory=directory))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="bench-pages", daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base + path

    def snapshot_pages(self, generated: tuple[int, ...]) -> dict[str, str]:
        """Label → URL of every page whose snapshot is measured."""
        urls = {name: self.url(f"/{name}") for name in ("login", "todo", "article", "table", "frames")}
        urls.update({f"gen-{n}": self.url(f"/gen?n={n}") for n in generated})
        if self.pydocs is not None:
            urls.update({label: self.url(f"/pydocs/{path}") for label, path in PYDOC_PAGES.items()
                         if (self.pydocs / path).exists()})
        return urls

    def __enter__(self) -> "PageServer":
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()
