"""The comparison for benches/intake.rs: every message of a mailbox export as text, with
Python's standard mbox and MIME parsers. Headers are printed, every text part (bodies and
attachments) is decoded (transfer encoding and charset) and printed."""

import mailbox
import sys
from email import policy
from email.parser import BytesParser

out = sys.stdout
parser = BytesParser(policy=policy.default)
for msg in mailbox.mbox(sys.argv[1], factory=parser.parse):
    for h in ("From", "To", "Cc", "Date", "Subject"):
        if msg[h]:
            out.write(f"{h}: {msg[h]}\n")
    for part in msg.walk():
        if part.is_multipart():
            continue
        if part.get_content_maintype() == "text":
            out.write(part.get_content())
        else:
            part.get_content()
