"""Images: fitting a picture to what a model takes, comparing two screenshots, numbering the refs on a screenshot."""
