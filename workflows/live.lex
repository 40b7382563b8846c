workflow live "A tenant's declaration to recover a security deposit, drafted and checked on one CPU"

// The whole pipeline on a laptop's CPU: one small real instruct model (SmolLM2-135M-Instruct,
// `scripts/small-model`) served by llama.cpp (`scripts/serve-small`) does every model stage.
// A model this small writes fluent English and invents names, dates, amounts and citations
// freely: the verifier decides what may leave, and the report shows what it blocked.
//
//   scripts/serve-small 8090 &
//   lexrun workflows/live.lex --endpoint '*=http://127.0.0.1:8090'
//
// Exit 0 when every claim of the final draft is proven by the intake file, 1 when the
// verifier blocked the draft (the usual outcome with a model this small).

use std.prompts
use std.verify

matter "matters/okafor-v-lakeside"

// A CPU: no GPUs to fit, one server slot so that every stage reuses the same prompt cache.
pool laptop {
  host  "localhost"
  serve llama_cpp at "http://127.0.0.1:8090"
}

model small on laptop {
  gguf    "models/SmolLM2-135M-Instruct.Q4_1.gguf"
  weights 94 MiB
  params  0.135B
  layers 30  kv_heads 3  head_dim 64
  ctx 8k
  temperature 0
  repeat_penalty 1.2  // greedy decoding of a model this small loops without it
  max_tokens 400  // the judge's cap; each stage sets its own
}

sources client {
  files       "intake/*.txt"
  bates       "OKAFOR" start 1 width 6
  description "Client letter, lease and emails"
}

// A small gate before any drafting: are there grounds at all?
stage gate {
  model   small
  prompt  std.prompts.gate
  reads   client
  returns { grounds: bool, reason: text }
  stop when not grounds
  max_tokens 160
  timeout 3m
}

stage draft after gate {
  model  small
  prompt std.prompts.affidavit
  reads  client, gate
  max_tokens 400
  timeout 4m
}

// Opposing counsel's view; sends the draft back once at most.
stage attack after draft {
  model   small
  prompt  std.prompts.adversary
  reads   client
  returns { passes: bool, objections: list of text }
  revise  draft until passes and objections is empty, at most 2 rounds
  max_tokens 240
  timeout 3m
}

// Strict rules, and every sentence that cites a page is judged against that page.
verify draft against client {
  rules std.verify.filing
  judge small
}

output "declaration.docx" from draft appendix verification
output "declaration.md"   from draft
