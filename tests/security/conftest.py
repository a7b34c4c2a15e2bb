"""The permanent attack suite: every hole found when Footnote was attacked stays tested here."""
