"""How a page is seen: snapshots with refs, readable text, annotated screenshots."""
