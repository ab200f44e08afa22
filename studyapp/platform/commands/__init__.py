"""``python -m studyapp``: the parser and dispatch (``cli``) and the study, account and database
commands."""
