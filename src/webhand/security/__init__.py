"""Security: which origins a browser may reach, host names as browsers read them, secrets and every spelling of them, masking, private folders."""
