"""The typed step pipeline that answers rules questions with citations."""
