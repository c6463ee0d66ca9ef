// Marks the page, so a test sees that the extension runs in it.
document.documentElement.setAttribute("data-webhand-test-marker", "marked");
