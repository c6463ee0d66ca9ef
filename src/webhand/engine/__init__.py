"""Getting and talking to a browser. Only this package imports Playwright."""
