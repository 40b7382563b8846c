workflow motion "Motion for summary judgment on approved, unpaid invoices"

// Same cluster as the affidavit. The reasoner first collects the authority the record itself
// supports; the drafter writes from that list only; the adversary attacks until it runs out
// of objections.

use std.prompts
use std.verify
use "lib/cluster.lex"

matter "matters/jones-v-midstate"

sources record {
  files       "record/**/*.txt", "record/**/*.pdf"
  bates       "JONES" start 101 width 6
  description "Subcontract, invoices, approval email and demand letter"
}

stage gate {
  model   gatekeeper
  prompt  std.prompts.gate
  reads   record
  returns { grounds: bool, reason: text, needs_figures: bool }
  stop when not grounds
}

stage research after gate {
  model   reasoner
  reads   record
  returns {
    undisputed_facts: list of record { fact: text, bates: text },
    authorities: list of record { citation: text, proposition: text, bates: text },
    amount_due: number
  }
  prompt """
    {{evidence}}

    You are preparing a motion for summary judgment for {{matter.name}}.
    From the record above only, list:
    - every fact the opposing party has admitted or cannot dispute, with its Bates number;
    - every case, statute and rule the record itself cites, with the proposition it is cited
      for and the Bates number where it appears;
    - the total amount due on approved invoices.
    Do not add authority that is not in the record.

    Reply with JSON matching this schema:
    {{schema}}
  """
  temperature 0
}

stage draft after research {
  model   drafter
  prompt  std.prompts.motion
  reads   record, research
  timeout 30m
}

stage attack after draft {
  model   adversary
  prompt  std.prompts.adversary
  reads   record
  returns { passes: bool, objections: list of text }
  revise  draft until passes and objections is empty, at most 2 rounds
}

verify draft against record {
  rules std.verify.strict
}

verify research against record {
  citations must appear
  bates     must exist
  on failure revise, at most 2 rounds
}

output "motion.docx" from draft appendix verification
output "motion.md"   from draft
