#pragma once
// Sentences that state something, and the claims that cover them.
//
// A page's prose is cut into sentences: a paragraph or a list item is one block (its lines
// joined), cut after '.', '!' or '?' followed by a space (not after "e.g.", "i.e.", "vs.", "cf.",
// "approx."); a table row (not the header, not the |---| rule) is one sentence; headings, fenced
// code and HTML comments are left out. In a lessons.json the sentences are those of every "why"
// and "meaning" text.
//
// A sentence *states* something when it holds
//   a number   a digit outside code spans, link targets and chapter/exercise names
//              ("chapter 05", "ex06.1", "issue 27"),
//   a comparison  more, less, fewer, faster, slower, same, even, only, never, always, every,
//              than, most, least, higher, lower, above, below, twice, half,
//   a cause    because, since, so that, therefore, hence, thus, due to, cause(s|d), which is why.
//
// Each docs/claims/*.json file ties its page's sentences to what backs them:
//   "claims":  [{"quote": ..., ...}]   a claim on a recording (tests/claims.hpp judges it)
//   "sources": [{"quote": ..., "source": "datasheet", "what": "H200 product brief"}]
//              a sentence that is not about a recording, and the source it comes from:
//              datasheet, seed (the post's A100 run), calc (napkin arithmetic from the shapes),
//              spec (a threshold a lesson or a test states),
//              code (what the program or a library does), definition, bench (a file under
//              docs/bench/, named in "what"), probe (/work/shared/reference figures, named)
//   or, for a page of bench results, a whole section:
//   "sources": [{"section": "## The trace reader", "source": "bench", "what":
//   "bench/bench_trace_reader.cpp"}]
//              covers every sentence under that heading (to the next heading of its level or
//              above) that names no recording (a sentence with "recording", "expected_output" or
//              a recording's folder needs a claim)
//   "todo":    ["the sentence's first words", ...]   a sentence still to tie: listed, so the
//              coverage report counts it as to do, not covered, and names it. The lists live in
//              docs/claims/todo/*.json ({"page", "todo"}); `figures claims --write-todo` writes
//              them from what is uncovered. An entry that starts no sentence, or a sentence that
//              is covered, is a problem: the list only shrinks.
// A sentence is covered when a claim's or a source's quote overlaps it in the page (the quote
// inside the sentence, the sentence inside the quote, or a quote across sentences that holds at
// least 12 characters of it). Quotes are matched as tests/claims.hpp matches them: HTML comments
// out, every run of white space one space.
#include <filesystem>
#include <string>
#include <vector>

namespace wb::figures {

struct Sentence {
  int line = 0;      // 1-based line of the page where it starts
  std::string text;  // white space collapsed
  bool number = false, comparison = false, cause = false;
  bool states() const { return number || comparison || cause; }
  size_t begin = 0, end = 0;  // its span in the page's normalized text (npos when not found)
};

// Every sentence of a Markdown text (states() or not), in order.
std::vector<Sentence> markdown_sentences(const std::string& markdown);
// The sentences of every "why" and "meaning" string of a lessons.json text.
std::vector<Sentence> lesson_text_sentences(const std::string& json_text);
// What a sentence states (sets number, comparison, cause).
void classify(Sentence& s);

// Text with <!--...--> comments removed and every run of white space made one space (the
// claims' quote matching).
std::string normalized(const std::string& text);
// The same text and, for each of its characters, its offset in `text` (to edit the raw page at
// a quote found in the normalized one).
std::string normalized_with_map(const std::string& text, std::vector<size_t>& where);

struct Cover {
  std::string by;  // "claims[3]", "sources[0] (datasheet)", "" when uncovered
  bool todo = false;
};
struct PageCoverage {
  std::string page;                   // relative to the root
  std::vector<Sentence> sentences;    // those that state something
  std::vector<Cover> covers;          // one per sentence
  std::vector<std::string> problems;  // a todo entry matching no sentence, a missing page, ...
  int covered() const;
  int todo() const;
  int uncovered() const;  // neither covered nor listed as todo
};

// The pages the coverage reads: chapters/*/README.md, chapters/*/lessons.json,
// docs/instructors.md (its answer key), docs/performance.md.
std::vector<std::string> coverage_pages(const std::filesystem::path& root);

// Coverage of one page by the claims files under root/docs/claims (every file whose "page" is it).
PageCoverage page_coverage(const std::filesystem::path& root, const std::string& page);
// The same, with the page's text and its claims files' texts given (for tests).
PageCoverage page_coverage_of(const std::string& page, const std::string& text,
                              const std::vector<std::string>& claims_files_json);

}  // namespace wb::figures
