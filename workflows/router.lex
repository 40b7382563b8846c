workflow router "Route a request from the attorney to the work it needs"

// One desk for every request. The gatekeeper, the small model on the NVLink pair, reads the
// request and names the work. A summary then runs on that same small model and wakes no other
// server; an affidavit wakes the whole pipeline: drafter, reasoner and adversary. A pool whose
// stages are all skipped is never asked anything.

use std.prompts
use std.verify
use "lib/cluster.lex"

matter "matters/smith-v-acme"

sources request {
  files       "request.txt"
  description "The attorney's request, as it came in"
}

// Both sample layouts: a Smith-style `intake/` folder or a Rivera-style `file/` folder.
sources client {
  files       "intake/**/*.txt", "file/**/*.txt"
  description "The client's file"
}

stage route {
  model   gatekeeper
  reads   request
  returns { work: text, reason: text }
  prompt """
    {{evidence}}

    You are the intake desk of a litigation firm. Read the request above and name the work it
    asks for, one of:
    - "summary": a summary and chronology of a file, for reading;
    - "affidavit": a sworn statement drafted from the client's materials, for signing.
    Anything else is "other". Give the reason in one sentence.

    Reply with JSON matching this schema:
    {{schema}}
  """
  temperature 0
  stop when work != "summary" and work != "affidavit"
}

// The light path: the small model already awake does the summary.
stage summary after route when route.work == "summary" {
  model   gatekeeper
  prompt  std.prompts.summary
  reads   client
  timeout 5m
}

// The heavy path, as in affidavit.lex.
stage draft after route when route.work == "affidavit" {
  model   drafter
  prompt  std.prompts.affidavit
  reads   client
  timeout 20m
}

stage reason after draft {
  model   reasoner
  prompt  std.prompts.reasoning
  reads   client, draft
  timeout 30m
}

stage attack after reason {
  model   adversary
  prompt  std.prompts.adversary
  reads   client
  returns { passes: bool, objections: list of text }
  revise  reason until passes and objections is empty, at most 3 rounds
}

verify summary against client {
  rules std.verify.review
}

verify reason against client {
  rules std.verify.strict
}

output "summary.md"     from summary appendix verification
output "affidavit.docx" from reason appendix verification
output "affidavit.md"   from reason
