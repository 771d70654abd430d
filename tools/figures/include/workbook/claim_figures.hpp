#pragma once
// The numbers the pages print, tied to the recordings by the claims files (docs/claims/*.json,
// docs/claims/README.md): checked, and rewritten after a re-record.
//
// A claim's figure with a "ref" (FILE#SELECTOR[ scale=F], the references of figures.hpp) names
// the value the page prints at the precision printed:
//   {"quote": "the GEMM in 1.9 µs", "figures": [{"printed": "1.9", "ref":
//   "h200/01_cold_64/lessons.json#throughput/data/gemm_median_us"}]}
// The quote is found in its page (HTML comments out, white space collapsed); the claim's figures
// are printed inside it in the order they are listed. A "files" entry of a claims file ties a
// block of the page to what it quotes:
//   {"quote": "C++ (`build/bin/01_cold_64`):", "file": "docs/parity/h200/cpp_table.txt"}
//            the first fenced code block after the quote holds the file, verbatim
//   {"quote": "...", "table": "cheatsheet"}
//            the first table after the quote is the lesson facts' cheatsheet (wb::cheatsheet_markdown())
// A claims file with "every_figure": true asks more of its page: every number followed by a unit
// (us, ms, %, x, TFLOP/s, ...) in its prose is one of its claims' figures or lies in one of its
// sources' quotes (chapters 01-07's READMEs set it).
//
//   check     every quote is in its page, every "ref" figure agrees with its recording, every
//             block is what it quotes; nothing is written
//   generate  writes the blocks that differ from what they quote; checks the figures
//   update    also rewrites each figure that moved: the number in the page, the claim's
//             "printed", and every quote of that page's claims files that holds the number
// A figure by "key" (a fact's data) is read, checked and rewritten the same way from the fact's
// data in the recording's lessons.json (comparison.json); tests/test_claims.cpp also recomputes
// it from the trace. One this pass cannot read there (a fact the file does not hold, a claim with
// a "spec" or a "reference" run) is counted and left to tests/test_claims.cpp.
#include <filesystem>
#include <string>
#include <vector>

namespace wb::figures {

enum class Mode { Check, Generate, Update };

struct ClaimsPass {
  std::vector<std::string> changes;   // "PAGE:LINE: OLD -> NEW [REF]" (update: rewritten)
  std::vector<std::string> problems;  // a lost quote, a figure off its recording, a stale block
  int figures = 0, key_figures = 0, key_only = 0, quotes = 0, blocks = 0;
  std::vector<std::string> written;  // files written (pages, claims files)
};

// Every claims file under root/docs/claims (not todo/), page by page.
ClaimsPass claims_pass(const std::filesystem::path& root, Mode mode);

}  // namespace wb::figures
