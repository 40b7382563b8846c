workflow affidavit "Tenant affidavit from intake to a verified draft"

// Runs on the reference cluster (lib/cluster.lex): a small gatekeeper, a drafter on board A,
// a heavy reasoner on board B, an adversary on the mixed pair and an extractor under Ollama.

use std.prompts
use std.verify
use "lib/cluster.lex"

matter "matters/smith-v-acme"

sources client {
  files       "intake/**/*.pdf", "intake/**/*.txt", "intake/**/*.md"
  bates       "SMITH" start 1 width 6
  description "Client intake: letter, lease, emails and invoices"
}

// A small model decides whether there are grounds before any large model is woken.
stage gate {
  model   gatekeeper
  prompt  std.prompts.gate
  reads   client
  returns { grounds: bool, reason: text, needs_figures: bool }
  stop when not grounds
}

stage draft after gate {
  model   drafter
  prompt  std.prompts.affidavit
  reads   client, gate
  timeout 20m
}

stage reason after draft {
  model   reasoner
  prompt  std.prompts.reasoning
  reads   client, draft
  timeout 30m
}

// Opposing counsel's view. Sends the draft back until it finds nothing to attack.
stage attack after reason {
  model   adversary
  prompt  std.prompts.adversary
  reads   client
  returns { passes: bool, objections: list of text }
  revise  reason until passes and objections is empty, at most 3 rounds
}

// Routing: only matters with money in dispute wake the Ollama host.
stage figures after gate when gate.needs_figures {
  model   extractor
  prompt  std.prompts.finance
  reads   client
  returns {
    amounts: list of record { amount: number, date: date, purpose: text, bates: text },
    total: number
  }
}

verify reason against client {
  rules std.verify.strict
}

verify figures against client {
  amounts must appear
  dates   must appear
  bates   must exist
  on failure flag
}

output "affidavit.docx" from reason appendix verification
output "affidavit.md"   from reason
output "figures.json"   from figures
