// std.prompts — prompt templates for litigation work.
//
// `use std.prompts`, then `prompt std.prompts.affidavit` in a stage. Every template puts the
// evidence packet first so a model server's prompt cache can reuse it across stages. The
// variables each template uses are listed in stdlib/README.md; `lexrun check` reports a
// template used in a stage that does not provide them.

template gate      "prompts/gate.hbs"
template affidavit "prompts/affidavit.hbs"
template motion    "prompts/motion.hbs"
template reasoning "prompts/reasoning.hbs"
template adversary "prompts/adversary.hbs"
template finance   "prompts/finance.hbs"
template summary   "prompts/summary.hbs"
