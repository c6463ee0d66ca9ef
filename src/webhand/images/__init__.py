"""Images: fitting a picture to what a model takes, comparing two screenshots."""
