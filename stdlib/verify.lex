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
