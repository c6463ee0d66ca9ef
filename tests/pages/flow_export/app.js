// The team app of tests/test_flow_export.py: rows from /api/rows, added and deleted through POSTs.
const rows = document.getElementById("rows");

async function load() {
  const list = await (await fetch("/api/rows")).json();
  rows.replaceChildren(...list.map((row) => {
    const tr = document.createElement("tr");
    tr.setAttribute("aria-label", row.name);
    for (const text of [row.name, row.email]) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.append(td);
    }
    const td = document.createElement("td");
    const button = document.createElement("button");
    button.textContent = "Delete";
    button.className = "del-" + Math.random().toString(36).slice(2, 6);  // a generated class, as builds make
    button.addEventListener("click", async () => {
      if (!confirm(`Delete ${row.name}?`)) return;
      await fetch("/api/rows/delete", {method: "POST", body: JSON.stringify({name: row.name})});
      load();
    });
    td.append(button);
    tr.append(td);
    return tr;
  }));
}

document.querySelector("form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.target;
  await fetch("/api/rows", {method: "POST", body: JSON.stringify({
    name: form.name.value, email: form.email.value, admin: form.admin.checked, team: form.team.value})});
  form.reset();
  load();
});

const pad = document.querySelector("[aria-label=Pad]");
pad.addEventListener("click", async (event) => {
  const side = event.offsetX > pad.clientWidth / 2 ? "right" : "left";
  await fetch("/api/pad", {method: "POST", body: side});
  document.getElementById("picked").textContent = `picked ${side}`;
});

load();
