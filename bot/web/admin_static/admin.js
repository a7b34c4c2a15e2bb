// Footnote admin: small improvements on pages that work without this script.
// Sort a table in place when its header is clicked (the header links sort on the server too),
// submit a filter when a select changes, and narrow a table's rows while typing in its search box.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("table.data th a[data-sort]").forEach((link) => {
    link.addEventListener("click", (event) => {
      const th = link.closest("th");
      const table = link.closest("table");
      const index = Array.from(th.parentNode.children).indexOf(th);
      const numeric = th.classList.contains("num");
      const ascending = th.getAttribute("aria-sort") !== "ascending";
      const body = table.tBodies[0];
      const rows = Array.from(body.rows);
      const value = (row) => row.cells[index].dataset.v || "";
      rows.sort((a, b) => {
        const x = value(a), y = value(b);
        if (x === "" || y === "") return x === y ? 0 : x === "" ? 1 : -1;
        const order = numeric ? Number(x) - Number(y) : x.localeCompare(y);
        return ascending ? order : -order;
      });
      rows.forEach((row) => body.appendChild(row));
      table.querySelectorAll("th").forEach((h) => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      event.preventDefault();
    });
  });
  document.querySelectorAll("select[data-autosubmit]").forEach((select) => {
    select.addEventListener("change", () => select.form.submit());
  });
  document.querySelectorAll("input[data-filter]").forEach((input) => {
    const target = document.getElementById(input.dataset.filter);
    input.addEventListener("input", () => {
      const words = input.value.toLowerCase();
      if (!target) return;
      target.querySelectorAll("tbody tr").forEach((row) => {
        row.hidden = words !== "" && !row.textContent.toLowerCase().includes(words);
      });
    });
  });
});
