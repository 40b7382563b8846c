// std.verify — named verification rule sets.
//
// `use std.verify`, then inside a `verify` block: `rules std.verify.strict`. Rules written in
// the block itself override the set's rule for the same kind of claim.

// Everything checkable must be proven by the evidence; anything unsupported blocks the output.
// For documents that will be signed or filed.
ruleset strict {
  citations must appear
  statutes  must appear
  dates     must appear
  bates     must exist
  quotes    must match exactly
  amounts   must appear
  on failure block
}

// `strict`, and every sentence that cites pages must say what those pages say: a judge model
// reads only the cited pages and quotes the passage that supports the sentence, and the
// quotation must be on a cited page. Name the judge in the `verify` block: `judge MODEL`.
// For declarations and affidavits whose sentences cite exhibits.
ruleset filing {
  rules std.verify.strict
  propositions must hold
}

// Citations, dates and Bates numbers block; amounts and statutes are flagged for a person.
// For internal memos and first drafts.
ruleset standard {
  citations must appear
  dates     must appear
  bates     must exist
  quotes    must match exactly
  statutes  must appear or flag
  amounts   must appear or flag
  on failure block
}

// Nothing blocks; every unsupported claim is marked in the output for review.
// For summaries a lawyer reads alongside the sources.
ruleset review {
  citations must appear
  dates     must appear
  bates     must exist
  quotes    must match exactly
  amounts   must appear
  on failure flag
}
