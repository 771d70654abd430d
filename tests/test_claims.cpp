// Story truth ([docs], torch-free): what the pages say a trace shows is what the recordings show.
//   - every claim in docs/claims/*.json quotes its page (the quote is there) and holds on the
//     recording it names: the lesson passes there, or the fact matches the claim's pattern, and
//     each figure the claim reads from the quote agrees with that fact's data;
//   - every chapter README and docs/instructors.md has its claims file, and every answer of the
//     instructors' answer key names its recording and is tied to at least one claim;
//   - the check fails on a contradicted claim (the answer key's old "far above 1 at 4096"), on a
//     quote the page no longer has, on a changed figure, on a recording that is missing (naming
//     the file) and on a lesson judged on the wrong recording;
//   - every sentence of the chapter READMEs, the lesson texts, the answer key and
//     docs/performance.md that states a number, a comparison or a cause is covered by a claim or
//     a named source, or is on its page's todo list, and that list only shrinks; a sentence
//     nobody covered fails the check, naming it.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "claims.hpp"
#include "workbook/sentences.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;
using claims::Claim;
using nlohmann::json;

namespace {

std::vector<Claim> all_claims() {
  std::vector<Claim> v;
  for (const auto& f : claims::claim_files())
    for (auto& c : claims::read_claims(f)) v.push_back(std::move(c));
  return v;
}

// "" when the quote is in its page (markers and white space aside).
std::string quote_problem(const Claim& c) {
  const fs::path page = claims::root() / c.page;
  if (!fs::exists(page)) return "no page " + c.page;
  if (claims::normalized(proc::slurp(page)).find(claims::normalized(c.quote)) == std::string::npos)
    return c.page + " no longer says \"" + c.quote + "\"";
  return "";
}

// The answer key's answers: "**Chapter NN ...**" then items "1.", "2.", ... up to the next chapter.
struct Answer {
  std::string chapter, text;
  int number = 0;
};
std::vector<Answer> answers(const std::string& md) {
  const size_t key = md.find("## Answer key");
  REQUIRE(key != std::string::npos);
  std::vector<Answer> out;
  static const std::regex chapter(R"(^\*\*Chapter (\d\d))"), item(R"(^(\d)\. )");
  std::string current;
  std::istringstream in(md.substr(key));
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, chapter)) {
      current = m[1].str();
    } else if (!current.empty() && std::regex_search(line, m, item)) {
      out.push_back({current, line + "\n", std::stoi(m[1].str())});
    } else if (!out.empty() && !line.empty() && line[0] == ' ') {
      out.back().text += line + "\n";
    }
  }
  return out;
}

}  // namespace

TEST_CASE("claims: every quote is in its page and holds on its recording", "[docs][claims][cpu]") {
  const auto claims = all_claims();
  claims::Recordings recs;
  int judged = 0;
  for (const auto& c : claims) {
    INFO(c.where << " (" << c.page << "): \"" << c.quote << "\" on " << c.recording);
    CHECK(quote_problem(c) == "");
    CHECK(claims::judge(c, recs) == "");
    ++judged;
  }
  CHECK(judged >= 60);
}

TEST_CASE("claims: every source's quote is in its page and names where it comes from",
          "[docs][claims][cpu]") {
  int n = 0;
  for (const auto& f : claims::claim_files())
    for (const auto& s : claims::read_sources(f)) {
      INFO(s.where << " (" << s.page << "): \"" << s.quote << "\" from " << s.source);
      Claim c;
      c.page = s.page;
      c.quote = s.quote;
      CHECK(quote_problem(c) == "");
      CHECK_FALSE(s.what.empty());
      ++n;
    }
  CHECK(n >= 10);
}

TEST_CASE("claims: each page that reads traces has claims; every answer names its recording",
          "[docs][claims][cpu]") {
  const auto claims = all_claims();
  std::map<std::string, int> per_page;
  for (const auto& c : claims) per_page[c.page]++;
  for (const auto& d : fs::directory_iterator(claims::root() / "chapters")) {
    if (!fs::exists(d.path() / "README.md")) continue;
    const std::string page = fs::relative(d.path() / "README.md", claims::root()).generic_string();
    INFO(page << " has " << per_page[page] << " claims");
    CHECK(per_page[page] >= 4);
  }
  const std::string key_page = "docs/instructors.md";
  const std::string md = proc::slurp(claims::root() / key_page);
  const auto list = answers(md);
  CHECK(list.size() >= 21);  // 3 per chapter, 7 chapters
  for (const auto& a : list) {
    INFO("chapter " << a.chapter << ", answer " << a.number << ":\n" << a.text);
    // It says where it comes from ...
    CHECK_THAT(a.text, ContainsSubstring("Recording"));
    // ... and a claim ties a sentence of it to that recording.
    const std::string text = claims::normalized(a.text);
    bool tied = false;
    for (const auto& c : claims)
      if (c.page == key_page && text.find(claims::normalized(c.quote)) != std::string::npos &&
          text.find(c.recording) != std::string::npos)
        tied = true;
    CHECK(tied);
  }
}

TEST_CASE("claims: a contradicted claim, a lost quote, a missing recording and the wrong recording fail",
          "[docs][claims][cpu]") {
  claims::Recordings recs;
  // The answer key once said Self CUDA / Self CPU is "far above 1 at 4096"; the H200 recording
  // says 0.81 (the final synchronize is CPU time).
  Claim old;
  old.page = "docs/instructors.md";
  old.quote = "far above 1 at 4096";
  old.recording = "h200/04_compute_bound_4096";
  old.fact = "overhead_bound";
  old.pattern = {"Self CUDA / Self CPU far above 1", "", {{"/cuda_cpu_ratio", wb::Condition::Op::Gt, 1.0}}};
  const std::string verdict = claims::judge(old, recs);
  CHECK_THAT(verdict, ContainsSubstring("FAIL"));
  CHECK_THAT(verdict, ContainsSubstring("cuda_cpu_ratio = 0."));  // below 1, whatever the run
  CHECK_THAT(verdict, ContainsSubstring("expected > 1"));
  CHECK_THAT(quote_problem(old), ContainsSubstring("no longer says"));  // and the page no longer says it

  // The same claim, as the page says it now, holds.
  Claim now = old;
  now.pattern = {"below 1 at 4096", "", {{"/cuda_cpu_ratio", wb::Condition::Op::Lt, 1.0}}};
  CHECK(claims::judge(now, recs) == "");

  // A recording that is not there is named, never skipped.
  Claim missing = now;
  missing.recording = "h200/no_such_run";
  CHECK_THAT(claims::judge(missing, recs), ContainsSubstring("missing recording: "));
  CHECK_THAT(claims::judge(missing, recs), ContainsSubstring("no_such_run/trace.json"));

  // A figure the quote prints is read from the same fact: the truly cold first step is hundreds
  // of times the others (the answer key once said "several times"); a changed figure is named.
  // The figure printed is the recording's own, rounded as a page prints it.
  const auto cold_report = nlohmann::json::parse(
      proc::slurp(fs::path(WORKBOOK_ROOT) / "expected_output/h200/01_cold_64/cold/lessons.json"));
  double ratio = -1;
  for (const auto& fct : cold_report.at("facts"))
    if (fct.at("id") == "step_widths") ratio = fct.at("data").at("first_over_median_rest").get<double>();
  REQUIRE(ratio > 100);
  const std::string printed = std::to_string(static_cast<long>(std::lround(ratio)));
  Claim cold;
  cold.page = "docs/instructors.md";
  cold.quote = printed + "x the median of the other two";
  cold.recording = "h200/01_cold_64/cold";
  cold.lesson = "step_widths";
  cold.figures = {{printed, "/first_over_median_rest", 1}};
  CHECK(claims::judge(cold, recs) == "");
  const std::string off_by_one = std::to_string(std::lround(ratio) + 1);
  cold.figures = {{off_by_one, "/first_over_median_rest", 1}};
  CHECK_THAT(claims::judge(cold, recs),
             ContainsSubstring("the page prints " + off_by_one + ", the recording's"));

  // A lesson judged on a recording that does not show it: chapter 02's warm step widths on
  // chapter 01's truly cold run.
  Claim wrong;
  wrong.recording = "h200/01_cold_64/cold";
  wrong.spec = "02_warmup";
  wrong.lesson = "step_widths";
  CHECK_THAT(claims::judge(wrong, recs), ContainsSubstring("FAIL"));
  wrong.recording = "h200/02_warmup";
  CHECK(claims::judge(wrong, recs) == "");

  // Chapter 10's graph lessons judge the GPU's busy share per replay: they hold on the graph's
  // recording and fail on eager's, which has no replay to measure.
  Claim replay;
  replay.spec = "10_llm_decode_graphs/graph";
  replay.lesson = "overhead_bound";
  replay.recording = "h200/10_llm_decode_graphs/graph";
  CHECK(claims::judge(replay, recs) == "");
  replay.recording = "h200/10_llm_decode_graphs/eager";
  CHECK_THAT(claims::judge(replay, recs), ContainsSubstring("FAIL"));

  // Fused < graph per token, on the GPU: the fused replay's claim fails on the unfused recording.
  Claim fused;
  fused.recording = "h200/10_llm_decode_graphs/graph";
  fused.fact = "overhead_bound";
  fused.pattern = {"the fused replay under 2.1 ms", "", {{"/replay_span_us", wb::Condition::Op::Lt, 2100.0}}};
  CHECK_THAT(claims::judge(fused, recs), ContainsSubstring("FAIL"));
  fused.recording = "h200/10_llm_decode_graphs/graph_fused";
  CHECK(claims::judge(fused, recs) == "");

  // Chapter 09: decode_cat's plan builds. The attention holds most of a decode_cat step and
  // little of a decode step; the claim on one fails on the other.
  Claim plans;
  plans.recording = "h200/09_llm_prefill_decode/decode";
  plans.fact = "step_cpu";
  plans.pattern = {"attention holds tens of ms per step",
                   "",
                   {{"/median_ops_us/aten::scaled_dot_product_attention", wb::Condition::Op::Ge, 20000.0}}};
  CHECK_THAT(claims::judge(plans, recs), ContainsSubstring("FAIL"));
  plans.recording = "h200/09_llm_prefill_decode/decode_cat";
  CHECK(claims::judge(plans, recs) == "");

  // A figure quoted by "ref" is read from that file: the bench's copy bandwidth (GB/s, printed
  // in TB/s with two decimals). The value is read here the plain way, so a re-run of the bench
  // keeps the test; a figure 0.17 TB/s off it fails.
  std::smatch bw;
  const std::string bench = proc::slurp(claims::root() / "docs/bench/llm_decode_h200_cpp.txt");
  REQUIRE(std::regex_search(bench, bw, std::regex(R"(copy bandwidth ([0-9]+) GB/s)")));
  const double tbs = std::stod(bw[1].str()) / 1000.0;
  char shown[16], wrong_bw[16];
  std::snprintf(shown, sizeof shown, "%.2f", tbs);
  std::snprintf(wrong_bw, sizeof wrong_bw, "%.2f", tbs + 0.17);
  Claim copy;
  copy.quote = "TB/s device copy";
  copy.figures = {
      {shown, "", 0.001, R"(docs/bench/llm_decode_h200_cpp.txt#re=copy\sbandwidth\s([0-9]+)\sGB/s)"}};
  CHECK(claims::judge(copy, recs) == "");
  copy.figures[0].printed = wrong_bw;
  CHECK_THAT(claims::judge(copy, recs), ContainsSubstring(std::string("the page prints ") + wrong_bw));

  // Chapter 09's decode throughput lesson can fail now: the prefill's GEMMs break its ceiling.
  Claim rate;
  rate.spec = "09_llm_prefill_decode/decode";
  rate.lesson = "throughput";
  rate.recording = "h200/09_llm_prefill_decode/decode";
  CHECK(claims::judge(rate, recs) == "");
  rate.recording = "h200/09_llm_prefill_decode/prefill";
  CHECK_THAT(claims::judge(rate, recs), ContainsSubstring("FAIL"));
}

TEST_CASE("claims: the files read strictly", "[docs][claims][cpu]") {
  const fs::path dir = proc::scratch("claims_read");
  auto bad = [&](const std::string& text) {
    std::ofstream(dir / "x.json") << text;
    try {
      claims::read_claims(dir / "x.json");
    } catch (const wb::SpecError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(bad(R"({"page": "p", "claims": [{"quote": "q", "recording": "r"}]})"),
             ContainsSubstring("either a \"lesson\" or a \"fact\""));
  CHECK_THAT(
      bad(R"({"page": "p", "claims": [{"quote": "q", "recording": "r", "lesson": "x", "colour": 1}]})"),
      ContainsSubstring("colour"));
  CHECK_THAT(bad(R"({"page": "p", "claims": [{"quote": "q", "recording": "r", "fact": "no_such_fact",
                 "text": "t", "all": [{"key": "/x", "op": "==", "value": 1}]}]})"),
             ContainsSubstring("unknown fact 'no_such_fact'"));
  CHECK(bad(R"({"page": "p", "claims": [{"quote": "q", "recording": "r", "lesson": "end_sync"}]})").empty());
  // A claim that only quotes figures by "ref" needs no recording; a figure names a key or a ref.
  CHECK(
      bad(R"({"page": "p", "claims": [{"quote": "q 4.24", "figures": [{"printed": "4.24", "ref": "docs/x#re=a"}]}]})")
          .empty());
  CHECK_THAT(
      bad(R"({"page": "p", "claims": [{"quote": "q 4", "figures": [{"printed": "4", "key": "/a", "ref": "b"}]}]})"),
      ContainsSubstring("not both"));
  CHECK_THAT(
      bad(R"({"page": "p", "claims": [{"quote": "q 4", "figures": [{"printed": "4", "key": "/a"}]}]})"),
      ContainsSubstring("recording"));
  fs::remove_all(dir);
}

// The todo lists (docs/claims/todo/*.json) held the sentences not tied yet; none is left, so a
// new sentence that states something must come with its claim or its source. The ceiling stays
// at zero.
constexpr int kTodoCeiling = 0;

TEST_CASE("claims: every sentence that states something is covered, or on its page's todo list",
          "[docs][claims][cpu]") {
  namespace fg = wb::figures;
  int total = 0, covered = 0, todo = 0;
  for (const auto& page : fg::coverage_pages(claims::root())) {
    const fg::PageCoverage pc = fg::page_coverage(claims::root(), page);
    for (size_t i = 0; i < pc.sentences.size(); ++i) {
      INFO(page << ":" << pc.sentences[i].line << ": " << pc.sentences[i].text);
      CHECK((!pc.covers[i].by.empty() || pc.covers[i].todo));
    }
    for (const auto& p : pc.problems) {
      INFO(p);
      CHECK(false);
    }
    total += static_cast<int>(pc.sentences.size()), covered += pc.covered(), todo += pc.todo();
  }
  INFO(covered << " of " << total << " sentences covered, " << todo << " on the todo lists");
  CHECK(total >= 800);  // the pages were read: chapters 01-10, the answer key, performance.md
  CHECK(todo <= kTodoCeiling);
}

TEST_CASE("claims: an uncovered sentence fails the coverage; a claim, a source or the todo list covers it",
          "[docs][claims][cpu]") {
  namespace fg = wb::figures;
  // A chapter README and the claims as they are.
  const std::string page = "chapters/09_llm_prefill_decode/README.md";
  const std::string text = proc::slurp(claims::root() / page);
  std::vector<std::string> files;
  for (const auto& f : claims::claim_files()) files.push_back(proc::slurp(f));
  if (fs::is_directory(claims::root() / "docs" / "claims" / "todo"))
    for (const auto& e : fs::directory_iterator(claims::root() / "docs" / "claims" / "todo"))
      files.push_back(proc::slurp(e.path()));
  const fg::PageCoverage before = fg::page_coverage_of(page, text, files);
  CHECK(before.uncovered() == 0);

  // A new sentence with a number and a comparison, tied to nothing: named, and counted.
  const std::string added = "The warm first step is 9x faster than the cold one.";
  const std::string edited = text + "\n" + added + " The steps are even.\n";
  const fg::PageCoverage after = fg::page_coverage_of(page, edited, files);
  CHECK(after.uncovered() == 2);
  std::vector<std::string> named;
  for (size_t i = 0; i < after.sentences.size(); ++i)
    if (after.covers[i].by.empty() && !after.covers[i].todo) named.push_back(after.sentences[i].text);
  CHECK(named == std::vector<std::string>{added, "The steps are even."});

  // A claim whose quote lies in the sentence covers it; so does a named source; so does the
  // todo list, which then names an entry that starts no sentence as stale.
  auto with = [&](const std::string& extra) {
    std::vector<std::string> f = files;
    f.push_back(R"({"page": ")" + page + R"(", )" + extra + "}");
    return fg::page_coverage_of(page, edited, f);
  };
  CHECK(
      with(R"("claims": [{"quote": "9x faster than the cold"}, {"quote": "steps are even"}])").uncovered() ==
      0);
  const auto src =
      with(R"("sources": [{"quote": "9x faster", "source": "seed"}], "todo": ["The steps are"])");
  CHECK(src.uncovered() == 0);
  CHECK(src.todo() == before.todo() + 1);
  CHECK(src.problems.empty());
  const auto stale =
      with(R"("claims": [{"quote": "9x faster"}, {"quote": "are even"}], "todo": ["The steps are"])");
  REQUIRE(stale.problems.size() == 1);
  CHECK_THAT(stale.problems[0], ContainsSubstring("take it off the list"));
  CHECK_THAT(with(R"("todo": ["No such sentence"])").problems.at(0), ContainsSubstring("starts no sentence"));

  // A bench section covers its sentences, but not one that names a recording, nor the next section.
  const std::string bench =
      "# B\n\n## Results\n\nThe tool is 3x faster than Python.\n\nThe H200 recording shows 5 kernels.\n\n"
      "## Other\n\nIt is 2x slower.\n";
  const auto sec = fg::page_coverage_of(
      "docs/b.md", bench,
      {R"({"page": "docs/b.md", "sources": [{"section": "## Results", "source": "bench", "what": "x"}]})"});
  REQUIRE(sec.sentences.size() == 3);
  CHECK(sec.covered() == 1);
  CHECK(sec.uncovered() == 2);
  CHECK_THAT(sec.covers[0].by, ContainsSubstring("section"));

  // What states something: numbers outside names and code, comparisons, causes.
  const auto kinds = fg::markdown_sentences(
      "Run `ex06.1` from chapter 05 on the H200. It is 3x. Fewer launches than eager. It waits because "
      "the queue is full. A plain sentence.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\n4 5 6\n```\n");
  REQUIRE(kinds.size() == 6);
  CHECK_FALSE(kinds[0].states());
  CHECK(kinds[1].number);
  CHECK(kinds[2].comparison);
  CHECK(kinds[3].cause);
  CHECK_FALSE(kinds[4].states());
  CHECK(kinds[5].text == "| 1 | 2 |");
}

// ---- every claim on every run ------------------------------------------------------------
// tests/data/reruns/<platform>-runK/ holds the lessons of more runs of the same build (not the
// traces): a claim on expected_output/<platform>/X must hold on <platform>-runK/X too. Its
// lesson (or its own pattern) is judged with today's conditions on that run's fact data; the
// recording's trace gives the device and the problem. A claim whose fact that run did not
// compute (a fact only the claim asks for) cannot be judged there and is counted, not passed.
namespace {
struct RerunVerdicts {
  int judged = 0, unjudged = 0;
  std::vector<std::string> failed;
};
RerunVerdicts judge_on_rerun(const fs::path& run_dir, const std::string& platform, claims::Recordings& recs) {
  RerunVerdicts v;
  for (const auto& c : all_claims()) {
    if (c.recording.rfind(platform + "/", 0) != 0) continue;
    const std::string sub = c.recording.substr(platform.size() + 1);
    const fs::path dir = run_dir / sub;
    const std::string where = c.where + " \"" + c.quote + "\" on " + run_dir.filename().string() + "/" + sub;
    if (fs::exists(dir / "comparison.json") && !fs::exists(dir / "lessons.json")) {
      // The lessons across variants, as that run judged them.
      const json cmp = json::parse(proc::slurp(dir / "comparison.json"));
      bool found = false;
      for (const auto& j : cmp.at("facts"))
        if (j.value("id", "") == c.lesson) {
          found = true;
          ++v.judged;
          if (j.value("status", "") != "pass") v.failed.push_back(where + ": " + j.value("verdict", ""));
        }
      if (!found) ++v.unjudged;
      continue;
    }
    if (!fs::exists(dir / "lessons.json")) {
      ++v.unjudged;  // that run did not record this folder (the Python recordings are made apart)
      continue;
    }
    const wb::LessonsReport rep = wb::lessons_from_json(json::parse(proc::slurp(dir / "lessons.json")));
    const std::string fact_id = c.lesson.empty() ? c.fact : c.lesson;
    const auto it =
        std::find_if(rep.facts.begin(), rep.facts.end(), [&](const wb::Fact& f) { return f.id == fact_id; });
    if (it == rep.facts.end() || (!c.reference.empty() && c.lesson.empty())) {
      ++v.unjudged;
      continue;
    }
    wb::Pattern pattern = c.pattern;
    if (!c.lesson.empty()) {
      const wb::LessonSpec* spec = wb::find_lesson_spec(c.spec.empty() ? rep.chapter : c.spec);
      REQUIRE(spec);
      const auto e = std::find_if(spec->expect.begin(), spec->expect.end(),
                                  [&](const wb::Expectation& x) { return x.fact == c.lesson; });
      REQUIRE(e != spec->expect.end());
      pattern = e->pattern;
    }
    // A key the run's data does not hold: that run was recorded before the fact measured it
    // (its lessons.json is older than the key), so the claim cannot be judged there.
    bool has_keys = true;
    for (const auto& cond : pattern.all) {
      try {
        has_keys = has_keys && !wb::fact_value(*it, cond.key).is_null();
      } catch (const json::exception&) {
        has_keys = false;
      }
    }
    if (!has_keys && it->measured) {
      ++v.unjudged;
      continue;
    }
    std::string why;
    const claims::Recording* r = recs.get(c.recording, why);
    REQUIRE(r);
    if (!r->trace) {
      ++v.unjudged;
      continue;
    }
    const wb::Fact f = wb::apply_pattern(*it, pattern, *r->trace, rep.options.problem);
    ++v.judged;
    if (f.status != wb::Status::Pass)
      v.failed.push_back(where + ": " + std::string(wb::status_mark(f.status)) + " " + f.verdict);
  }
  return v;
}
}  // namespace

TEST_CASE("claims: every claim holds on every other recorded run (tests/data/reruns)",
          "[docs][claims][cpu]") {
  const fs::path reruns = claims::root() / "tests" / "data" / "reruns";
  claims::Recordings recs;
  int runs = 0;
  for (const auto& e : fs::directory_iterator(reruns)) {
    if (!e.is_directory()) continue;
    const std::string name = e.path().filename().string();
    const size_t dash = name.find("-run");
    REQUIRE(dash != std::string::npos);
    const RerunVerdicts v = judge_on_rerun(e.path(), name.substr(0, dash), recs);
    INFO(name << ": " << v.judged << " claims judged, " << v.unjudged << " not judgeable there");
    for (const auto& f : v.failed) UNSCOPED_INFO(f);
    CHECK(v.failed.empty());
    CHECK(v.judged >= v.unjudged);  // most claims are judged on every run, not skipped
    ++runs;
  }
  CHECK(runs >= 1);
}

TEST_CASE(
    "claims on other runs: another chapter's lessons in a run fail its claims; data it lacks is not a pass",
    "[docs][claims][cpu]") {
  // A copy of the second H200 run with chapters 01 and 04 swapped (the 64x64 cold-start chapter
  // and the compute-bound 4096 one): the claims on each must fail on the other's lessons.
  const fs::path src = claims::root() / "tests" / "data" / "reruns" / "h200-run2";
  const fs::path dst =
      fs::temp_directory_path() / ("wb_claims_rerun_" + std::to_string(::getpid())) / "h200-run9";
  fs::remove_all(dst.parent_path());
  fs::create_directories(dst);
  fs::copy(src, dst, fs::copy_options::recursive);
  claims::Recordings recs;
  const RerunVerdicts clean = judge_on_rerun(dst, "h200", recs);
  CHECK(clean.failed.empty());
  const fs::path a = dst / "01_cold_64" / "lessons.json", b = dst / "04_compute_bound_4096" / "lessons.json";
  const std::string la = proc::slurp(a), lb = proc::slurp(b);
  std::ofstream(a) << lb;
  std::ofstream(b) << la;
  const RerunVerdicts swapped = judge_on_rerun(dst, "h200", recs);
  for (const auto& f : swapped.failed) UNSCOPED_INFO(f);
  CHECK(swapped.failed.size() >= 5);
  // Every fact's data emptied: nothing can be judged, and nothing counts as holding.
  for (const auto& e : fs::recursive_directory_iterator(dst))
    if (e.path().filename() == "lessons.json") {
      json j = json::parse(proc::slurp(e.path()));
      for (auto& f : j["facts"]) f["data"] = json::object();
      std::ofstream(e.path()) << j.dump();
    }
  const RerunVerdicts emptied = judge_on_rerun(dst, "h200", recs);
  CHECK(emptied.judged + static_cast<int>(emptied.failed.size()) < clean.judged / 4);
  CHECK(emptied.unjudged > clean.unjudged + clean.judged / 2);
  fs::remove_all(dst.parent_path());
}
