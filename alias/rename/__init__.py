"""rename."""
