"""What the turns on record tell, and who may see it: the durable record of turns and feedback
(``feedback.py``), the gap report for document owners and its weekly digest, rated answers
exported as evaluation cases, and forgetting one person everywhere (``privacy.py``). What may
live here: code that reads or writes the record after a turn is answered; never on the answer's
path.
"""
