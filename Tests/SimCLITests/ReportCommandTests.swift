import Foundation
import Replica
import Scenarios
import SimSyncEngine
@_spi(Kernel) import Simulator
import Testing

@testable import SimCLI

/// `sim-cli report FILE.jsonl…`: one summary of a campaign or of its shards in any order — the
/// same text whatever the order, the sharding or the copies — diagnostics that name the line and
/// column, at most 100 columns, and an HTML page that needs nothing from outside.
@Suite struct ReportCommandTests {
  /// A fresh folder, removed by the caller.
  func temporaryFolder(_ name: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }

  /// A record of `seed` with one anomaly of each of `kinds`, settled after `seed` ms.
  func record(
    _ seed: UInt64, _ kinds: [AnomalyKind] = [], policy: String = "cloudkit-default", scenario: String = "default", hash: String? = nil,
    wall: UInt64? = nil
  ) -> String {
    var counts = [Int](repeating: 0, count: AnomalyKind.allCases.count)
    for kind in kinds { counts[kind.ordinal] += 1 }
    let hex = String(seed &* 0x9E37_79B9_7F4A_7C15, radix: 16)
    var r = FuzzRecord(
      seed: seed, policy: policy, scenario: scenario, traceHash: hash ?? String(repeating: "0", count: 16 - hex.count) + hex,
      violations: kinds.filter(\.isViolation).count, counts: counts, minimized: nil)
    if seed % 13 == 0 { r.neverConverged = true } else { r.convergedAfter = SimDuration(nanoseconds: Int64(seed % 97) * 7_000_000) }
    r.wallMicroseconds = wall
    return r.jsonLine
  }

  /// Seeds 1…120 of a made-up campaign: a few signatures, informational kinds, seeds never quiet.
  func campaign(wall: Bool = false) -> [String] {
    (1...120).map { (seed: UInt64) in
      var kinds: [AnomalyKind] = []
      if seed % 7 == 0 { kinds.append(.lostEdit) }
      if seed % 11 == 0 { kinds.append(.staleOverwrite) }
      if seed % 5 == 0 { kinds.append(.concurrentOverwrite) }
      if seed == 64 { kinds += [.resurrection, .divergence, .strandedRecord] }
      return record(seed, kinds, wall: wall ? 900 + seed * 10 : nil)
    }
  }

  func write(_ lines: [String], to path: String, newline: Bool = true) throws {
    try (lines.joined(separator: "\n") + (newline && !lines.isEmpty ? "\n" : "")).write(toFile: path, atomically: true, encoding: .utf8)
  }

  /// The text without its `input …` lines (which name the files).
  func withoutInputs(_ text: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("input ") }.joined(separator: "\n")
  }

  @Test func aShardedCampaignInShuffledFilesReportsWhatTheUnshardedCampaignReports() throws {
    let dir = try temporaryFolder("report-shards")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let common = ["fuzz", "--policy", "memory-outbox", "--seeds", "1..24", "--intents", "8", "--quiet"]
    #expect(runCLI(common + ["--jobs", "2", "--out", "\(dir)/all.jsonl"]).code == .failure)
    for k in 1...4 { _ = runCLI(common + ["--jobs", "1", "--shard", "\(k)/4", "--out", "\(dir)/shard-\(k).jsonl"]) }
    let shards = try [3, 1, 4, 2].map { try String(contentsOfFile: "\(dir)/shard-\($0).jsonl", encoding: .utf8) }
    try shards.joined().write(toFile: "\(dir)/merged.jsonl", atomically: true, encoding: .utf8)
    let all = runCLI("report", "\(dir)/all.jsonl")
    let merged = runCLI("report", "\(dir)/merged.jsonl")
    let separate = runCLI("report", "\(dir)/shard-2.jsonl", "\(dir)/shard-4.jsonl", "\(dir)/shard-1.jsonl", "\(dir)/shard-3.jsonl")
    #expect(all.code == .failure, "\(all.stderr)")
    #expect(all.stderr.isEmpty)
    #expect(all.stdout.contains("seeds     1..24: all 24 run\n"), "\(all.stdout)")
    #expect(all.stdout.contains("  signature 1: "))
    #expect(withoutInputs(merged.stdout) == withoutInputs(all.stdout))
    #expect(withoutInputs(separate.stdout) == withoutInputs(all.stdout))
    #expect(separate.stdout.contains("input \(dir)/shard-2.jsonl: 6 records\ninput \(dir)/shard-4.jsonl: 6 records\n"))
    // One shard alone: every 4th seed, as --shard says.
    #expect(runCLI("report", "\(dir)/shard-3.jsonl").stdout.contains("2..22, every 4th (seed mod 4 = 2, as --shard 3/4 runs): all 6 run"))
  }

  @Test func recordsInAnyOrderPrintTheSameText() throws {
    let dir = try temporaryFolder("report-order")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let lines = campaign()
    try write(lines, to: "\(dir)/a.jsonl")
    // A fixed shuffle: every 7th line first, then the rest backwards.
    let shuffled = stride(from: 0, to: lines.count, by: 7).map { lines[$0] } + lines.indices.reversed().filter { $0 % 7 != 0 }.map { lines[$0] }
    try write(shuffled, to: "\(dir)/b.jsonl")
    let a = runCLI("report", "\(dir)/a.jsonl")
    let b = runCLI("report", "\(dir)/b.jsonl")
    #expect(a.code == .failure)
    #expect(withoutInputs(a.stdout) == withoutInputs(b.stdout))
    #expect(a.stdout != b.stdout, "the input lines name the files")
    // The first signature is the first seed's; seeds counted and listed in seed order.
    // (Seed 77 has both kinds: a signature of its own.)
    #expect(a.stdout.contains("  signature 1: 16 seeds (13.3%), first at seed 7\n    kinds    lost-edit\n"), "\(a.stdout)")
    #expect(a.stdout.contains("    seeds    7, 14, 21, 28, 35 and 11 more\n"))
    #expect(a.stdout.contains("  failing   27 seeds (22.5%) · 4 signatures\n"))
    #expect(a.stdout.contains("  signature 4: 1 seed (0.8%), first at seed 77\n    kinds    lost-edit + stale-overwrite\n"))
    #expect(a.stdout.contains("; 9 seeds never quiet\n"))
    #expect(a.stdout.contains("  concurrent-overwrite     24         24  informational\n"))
  }

  @Test func copiesOfASeedCountOnceAndCopiesThatDisagreeAreAnError() throws {
    let dir = try temporaryFolder("report-copies")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let lines = campaign()
    try write(lines, to: "\(dir)/a.jsonl")
    let once = runCLI("report", "\(dir)/a.jsonl")
    let twice = runCLI("report", "\(dir)/a.jsonl", "\(dir)/a.jsonl")
    #expect(twice.code == .failure)
    #expect(withoutInputs(twice.stdout) == withoutInputs(once.stdout))
    #expect(twice.stderr.contains("note: 120 records repeat a seed with the same outcome"), "\(twice.stderr)")
    // A copy with another wall time or a minimal scenario named is the same outcome.
    try write([record(7, [.lostEdit], wall: 5)], to: "\(dir)/timed.jsonl")
    #expect(withoutInputs(runCLI("report", "\(dir)/a.jsonl", "\(dir)/timed.jsonl").stdout) == withoutInputs(once.stdout))
    // Another trace hash for seed 9: another campaign under the same names.
    try write([record(8), record(9, hash: "00000000000000ff")], to: "\(dir)/other.jsonl")
    let conflict = runCLI("report", "\(dir)/a.jsonl", "\(dir)/other.jsonl")
    #expect(conflict.code == .dataError)
    #expect(conflict.stdout.isEmpty)
    #expect(
      conflict.stderr.hasPrefix(
        "\(dir)/other.jsonl:2:1: error: seed 9 of policy cloudkit-default on workload default has another outcome at \(dir)/a.jsonl:9 (trace hash 00000000000000ff here, "
      ), "\(conflict.stderr)")
    #expect(conflict.stderr.contains("Error: 1 seed has two records that disagree."))
  }

  @Test func aLastLineCutShortIsLeftOutWithANote() throws {
    let dir = try temporaryFolder("report-torn")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let lines = Array(campaign().prefix(10))
    try (lines.prefix(9).joined(separator: "\n") + "\n" + String(lines[9].prefix(40))).write(
      toFile: "\(dir)/torn.jsonl", atomically: true, encoding: .utf8)
    let r = runCLI("report", "\(dir)/torn.jsonl")
    #expect(r.code == .failure, "\(r.stderr)")
    #expect(
      r.stderr
        == "\(dir)/torn.jsonl:10: note: the last line stops in the middle of a record (a campaign stopped while writing it): left out; 'fuzz --resume' runs its seed again\n"
    )
    #expect(r.stdout.contains("input \(dir)/torn.jsonl: 9 records\n"))
    #expect(r.stdout.contains("seeds     1..9: all 9 run\n"))
    // The same line cut short with another file after it (cat) is an error: it is not the last.
    try (lines.prefix(9).joined(separator: "\n") + "\n" + String(lines[9].prefix(40)) + lines[0] + "\n").write(
      toFile: "\(dir)/joined.jsonl", atomically: true, encoding: .utf8)
    let joined = runCLI("report", "\(dir)/joined.jsonl")
    #expect(joined.code == .dataError)
    #expect(
      joined.stderr.hasPrefix(
        "\(dir)/joined.jsonl:10:43: error: not JSON: expected ':' after a key, found 'c' (a record cut short with another after it: a file whose last line was cut short, concatenated with another?)\n"
      ), "\(joined.stderr)")
  }

  @Test func linesThatAreNotRecordsAreNamedByLineAndColumn() throws {
    let dir = try temporaryFolder("report-bad")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let good = record(1)
    func report(_ text: [UInt8]) throws -> (code: ExitCode, stdout: String, stderr: String) {
      try Data(text).write(to: URL(fileURLWithPath: "\(dir)/bad.jsonl"))
      return runCLI("report", "\(dir)/bad.jsonl")
    }
    let cases: [(String, [UInt8], String)] = [
      ("a bad value", Array("\(good)\n{\"seed\": x}\n".utf8), "bad.jsonl:2:10: error: not JSON: expected a value, found 'x'"),
      (
        "a string for a number", Array("{\"seed\":\"one\",\"policy\":\"p\"}\n".utf8),
        "bad.jsonl:1:9: error: not a fuzz record: \"seed\" must be a whole number"
      ),
      ("a missing key", Array("{\"seed\":1}\n".utf8), "bad.jsonl:1:1: error: not a fuzz record: it has no \"policy\" key"),
      ("binary", [0x7B, 0x22, 0xFF, 0x00, 0x0A], "bad.jsonl:1:3: error: byte 0xFF is not UTF-8 text"),
      ("an array", Array("[1,2]\n".utf8), "bad.jsonl:1:1: error: not a fuzz record: a record is a JSON object, one per line"),
      ("deep nesting", Array(String(repeating: "[", count: 100_000).utf8) + [0x0A], "bad.jsonl:1:17: error: not JSON: nested more than 16 deep"),
      (
        "a count out of range", Array(good.replacingOccurrences(of: "\"lost-edit\":0", with: "\"lost-edit\":-3").utf8) + [0x0A],
        "error: not a fuzz record: each count must be from 0 to 1000000000"
      ),
    ]
    for (what, text, expected) in cases {
      let r = try report(text)
      #expect(r.code == .dataError, "\(what)")
      #expect(r.stdout.isEmpty, "\(what)")
      #expect(r.stderr.contains(expected), "\(what): \(r.stderr)")
      #expect(r.stderr.contains("nothing is reported"), "\(what)")
    }
    // Twelve bad lines: ten shown, the rest counted.
    let many = try report(Array(String(repeating: "nope\n", count: 12).utf8))
    #expect(many.stderr.components(separatedBy: ": error: ").count - 1 == 10)
    #expect(many.stderr.contains("… and 2 more\nError: 12 lines of the input are not fuzz records; nothing is reported."))
    // Nothing to report: an empty file, or blank lines only.
    let empty = try report([])
    #expect(empty.code == .dataError)
    #expect(empty.stderr == "Error: no fuzz records in '\(dir)/bad.jsonl'; report reads the JSON Lines that 'fuzz --out FILE.jsonl' writes.\n")
    #expect(try report(Array("\n  \n".utf8)).code == .dataError)
    // The summary fuzz --format json prints is not a results file, and report says so.
    let summary = try report(Array("{\"failures\":[],\"policy\":\"p\",\"seeds\":3,\"signatures\":[]}\n".utf8))
    #expect(summary.stderr.contains("(this is the summary 'fuzz --format json' prints"), "\(summary.stderr)")
  }

  @Test func usageErrorsSayWhatWasMeant() throws {
    let dir = try temporaryFolder("report-usage")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try write(campaign(), to: "\(dir)/results.jsonl")
    let none = runCLI("report")
    #expect(none.code == .usage)
    #expect(none.stderr.hasPrefix("Error: missing argument FILE.jsonl.\nUsage: sim-cli report FILE.jsonl... [--html OUT.html]"))
    let typo = runCLI("report", "\(dir)/results.jsonl", "--htm", "x.html")
    #expect(typo.code == .usage)
    #expect(typo.stderr.hasPrefix("Error: unknown option '--htm'. Did you mean '--html'?"))
    let missing = runCLI("report", "\(dir)/result.jsonl")
    #expect(missing.code == .usage)
    #expect(missing.stderr.hasPrefix("Error: no file '\(dir)/result.jsonl'. Did you mean '\(dir)/results.jsonl'?\n"), "\(missing.stderr)")
    let folder = runCLI("report", dir)
    #expect(folder.code == .usage)
    #expect(folder.stderr.hasPrefix("Error: '\(dir)' is a folder; give the results files in it ('\(dir)/*.jsonl')."))
    #expect(runCLI("report", "\(dir)/results.jsonl", "--no-shrink").code == .usage)
    #expect(runCLI("report", "-", "-").stderr.hasPrefix("Error: '-' (standard input) can be read only once."))
    // Writing the page over an input is refused before anything is read.
    let over = runCLI("report", "\(dir)/results.jsonl", "--html", "\(dir)/results.jsonl")
    #expect(over.code == .usage)
    #expect(over.stderr.contains("that is an input of this command"))
    #expect(try String(contentsOfFile: "\(dir)/results.jsonl", encoding: .utf8).hasPrefix("{"))
    #expect(runCLI("help").stdout.contains("  report "))
  }

  @Test func everyLineFitsInAHundredColumns() throws {
    let dir = try temporaryFolder("report-width")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    // A policy whose signatures name many axes, a workload of a long name, and every kind.
    let policy = "cloudkit-default unit=mark-first outbox=memory retry=never delete=hard"
    let every = AnomalyKind.allCases
    var lines = (1...40).map { record($0, $0 % 2 == 0 ? every : [.lostEdit], policy: policy, scenario: "a-workload-with-a-rather-long-name") }
    lines += [record(1, [.lostEdit], policy: "app NotesApp"), record(2, [], policy: "my own policy")]
    try write(lines, to: "\(dir)/wide.jsonl")
    let r = runCLI("report", "\(dir)/wide.jsonl")
    #expect(r.code == .failure, "\(r.stderr)")
    #expect(r.stdout.contains("report: 3 campaigns · 42 seeds"))
    #expect(r.stdout.contains("    axes     none: the app's own code is what to look at\n"))
    for line in r.stdout.split(separator: "\n") where !line.hasPrefix("input ") {
      #expect(line.count <= 100, "\(line.count) columns: \(line)")
    }
    #expect(r.stdout.contains(" \\\n"), "a long again command is continued with a backslash")
    // fuzz's summary table too.
    let fuzz = runCLI("fuzz", "--policy", policy, "--seeds", "1..6", "--intents", "8", "--jobs", "2")
    let table = try #require(fuzz.stdout.components(separatedBy: "by signature:\n").last?.components(separatedBy: "\n\n").first)
    #expect(table.split(separator: "\n").count >= 4, "\(fuzz.stdout)")
    for line in table.split(separator: "\n") { #expect(line.count <= 100, "\(line.count) columns: \(line)") }
  }

  @Test func theExitCodeSaysWhetherASeedFailed() throws {
    let dir = try temporaryFolder("report-exit")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try write((1...5).map { record($0, [.concurrentOverwrite]) }, to: "\(dir)/pass.jsonl")
    let pass = runCLI("report", "\(dir)/pass.jsonl")
    #expect(pass.code == .success)
    #expect(pass.stdout.contains("  failing   0 seeds (0.0%) · 0 signatures\n"))
    try write([record(6, [.lostEdit]), record(5, [.concurrentOverwrite])], to: "\(dir)/fail.jsonl")
    #expect(runCLI("report", "\(dir)/fail.jsonl").code == .failure)
    let json = runCLI("report", "\(dir)/pass.jsonl", "\(dir)/fail.jsonl", "--format", "json")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    let campaigns = try #require(object["campaigns"] as? [[String: Any]])
    #expect(campaigns.count == 1)
    #expect(campaigns.first?["failing"] as? Int == 1)
    #expect(object["duplicates"] as? Int == 1)
  }

  @Test func theHTMLPageIsSelfContainedEscapedAndDrawsEveryPlot() throws {
    let dir = try temporaryFolder("report-html")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    // A workload name with markup in it: it must come out as text.
    let name = "<b onload=\"x()\">&'"
    try write(
      campaign(wall: true).map { $0.replacingOccurrences(of: "\"scenario\":\"default\"", with: "\"scenario\":\"<b onload=\\\"x()\\\">&'\"") },
      to: "\(dir)/r.jsonl")
    let r = runCLI("report", "\(dir)/r.jsonl", "--html", "\(dir)/r.html", "--no-shrink")
    #expect(r.code == .failure, "\(r.stderr)")
    #expect(r.stderr == "wrote report \(dir)/r.html\n")
    let page = try String(contentsOfFile: "\(dir)/r.html", encoding: .utf8)
    #expect(page.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"))
    #expect(page.contains("content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\""))
    #expect(!page.contains(name))
    #expect(page.contains("workload &lt;b onload=&quot;x()&quot;&gt;&amp;&#39;"))
    #expect(!page.contains("<script"))
    #expect(page.range(of: #"(src|href)="https?:"#, options: .regularExpression) == nil)
    // Four plots, each with marks; no sentence of absent data.
    let plots = page.components(separatedBy: "<svg class=\"plot\"").dropFirst()
    #expect(plots.count == 4)
    for plot in plots {
      let marks = try #require(plot.firstMatch(of: /data-marks="(\d+)"/)).1
      #expect(Int(marks)! > 0)
      #expect(plot.components(separatedBy: "</svg>")[0].contains("class=\"mark\""))
    }
    #expect(!page.contains("class=\"absent\""))
    #expect(page.contains("seeds/s on one worker"))
    // Without --timings the throughput plot says why it is not there; no empty plot.
    try write(campaign(), to: "\(dir)/untimed.jsonl")
    #expect(runCLI("report", "\(dir)/untimed.jsonl", "--html", "\(dir)/u.html", "--no-shrink").code == .failure)
    let untimed = try String(contentsOfFile: "\(dir)/u.html", encoding: .utf8)
    #expect(untimed.components(separatedBy: "<svg class=\"plot\"").count - 1 == 3)
    #expect(untimed.contains("<p class=\"absent\">No wall-clock times in these records: &#39;fuzz --timings --out FILE&#39; adds"))
    #expect(untimed.contains("Minimal scenario: not saved (--no-shrink)"))
    // The same records give the same bytes.
    #expect(runCLI("report", "\(dir)/untimed.jsonl", "--html", "\(dir)/u2.html", "--no-shrink").code == .failure)
    #expect(try String(contentsOfFile: "\(dir)/u2.html", encoding: .utf8) == untimed)
  }

  @Test func eachSignatureHasItsMinimalScenarioAndTimelineFoundOrShrunk() throws {
    let dir = try temporaryFolder("report-minimal")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let campaign = ["fuzz", "--policy", "memory-outbox", "--seeds", "3..8", "--intents", "8", "--jobs", "2", "--quiet", "--timings"]
    // Saved by fuzz: the text names the file, and finds it after the folder moved.
    #expect(runCLI(campaign + ["--out", "\(dir)/saved.jsonl", "--minimize-to", "\(dir)/failures"]).code == .failure)
    let saved = runCLI("report", "\(dir)/saved.jsonl")
    #expect(
      saved.stdout.contains("    minimal  \(dir)/failures/default-stranded-record-seed-3.scenario\n             (3 timeline lines)\n"),
      "\(saved.stdout)")
    try FileManager.default.moveItem(atPath: dir + "/failures", toPath: dir + "/moved")
    let records = try String(contentsOfFile: "\(dir)/saved.jsonl", encoding: .utf8).replacingOccurrences(
      of: "\(dir)/failures/", with: "elsewhere/failures/")
    try FileManager.default.createDirectory(atPath: "\(dir)/moved/failures", withIntermediateDirectories: true)
    try FileManager.default.moveItem(
      atPath: "\(dir)/moved/default-stranded-record-seed-3.scenario", toPath: "\(dir)/moved/failures/default-stranded-record-seed-3.scenario")
    try FileManager.default.removeItem(atPath: "\(dir)/moved/default-lost-edit+divergence-seed-8.scenario")
    try records.write(toFile: "\(dir)/moved/r.jsonl", atomically: true, encoding: .utf8)
    let moved = runCLI("report", "\(dir)/moved/r.jsonl")
    #expect(moved.stdout.contains("    minimal  \(dir)/moved/failures/default-stranded-record-seed-3.scenario\n"), "\(moved.stdout)")
    #expect(
      moved.stdout.contains(
        "    minimal  elsewhere/failures/default-lost-edit+divergence-seed-8.scenario\n             (named by seed 8's record; not there)\n"))
    // Not saved: the page shrinks the first seed as fuzz would, and draws its run.
    #expect(runCLI(campaign + ["--out", "\(dir)/plain.jsonl"]).code == .failure)
    let r = runCLI("report", "\(dir)/plain.jsonl", "--html", "\(dir)/p.html", "--jobs", "2", "--intents", "8")
    #expect(r.code == .failure)
    let page = try String(contentsOfFile: "\(dir)/p.html", encoding: .utf8)
    #expect(page.contains("Again: <code>sim-cli fuzz --seeds 3..3 --policy &#39;memory-outbox&#39; --intents 8</code>"))
    #expect(
      page.contains(
        "Minimal scenario: shrunk here from seed 3 (not saved: fuzz --minimize-to DIR saves it as default-stranded-record-seed-3.scenario)"))
    #expect(page.contains("<pre class=\"scenario\">scenario default-stranded-record-seed-3\nabout &quot;Shrunk by sim-cli from default-seed-3"))
    #expect(page.components(separatedBy: "<div class=\"timeline\">\n<svg xmlns=").count - 1 == 2)
    // Without --intents 8 the seeds do not replay (their trace hashes say so): not shrunk.
    #expect(runCLI("report", "\(dir)/plain.jsonl", "--html", "\(dir)/q.html", "--jobs", "2").code == .failure)
    let unshrunk = try String(contentsOfFile: "\(dir)/q.html", encoding: .utf8)
    #expect(unshrunk.contains("Minimal scenario: not shrunk: seed 3 runs here with trace hash "))
    #expect(unshrunk.contains("the campaign ran with other --intents (say them with report --intents N)"))
    #expect(!unshrunk.contains("<div class=\"timeline\">"))
    // Marker ids are the picture's own: no id twice in the page.
    let ids = page.matches(of: #/ id="([^"]+)"/#).map { String($0.1) }
    #expect(Set(ids).count == ids.count)
  }

  @Test func fuzzTimingsAddsEachSeedsWallTimeAndChangesNothingElse() throws {
    let dir = try temporaryFolder("report-timings")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let common = ["fuzz", "--seeds", "1..5", "--intents", "8", "--jobs", "2", "--quiet"]
    #expect(runCLI(common + ["--out", "\(dir)/plain.jsonl"]).code == .success)
    #expect(runCLI(common + ["--out", "\(dir)/timed.jsonl", "--timings"]).code == .success)
    let plain = try String(contentsOfFile: "\(dir)/plain.jsonl", encoding: .utf8).split(separator: "\n")
    let timed = try String(contentsOfFile: "\(dir)/timed.jsonl", encoding: .utf8).split(separator: "\n")
    #expect(timed.count == 5)
    for (p, t) in zip(plain, timed) {
      let match = try #require(t.firstMatch(of: #/,"wallMicroseconds":([0-9]+)}$/#), "\(t)")
      #expect(Int(match.1)! > 0)
      #expect(t.replacingOccurrences(of: String(match.0), with: "}") == p)
    }
    #expect(runCLI(common + ["--timings"]).stderr.hasPrefix("Error: --timings needs --out FILE.jsonl"))
  }

  /// An app's campaign: its signatures name no policy axis, and every one is shrunk on the
  /// worker threads, which are given the tool's apps.
  @Test func anAppsCampaignIsShrunkWithTheAppOnEveryThread() throws {
    let dir = try temporaryFolder("report-app")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let apps = [AppUnderTest(NotesAppNotPersistingState.self)]
    func run(_ arguments: [String]) -> (ExitCode, String) {
      let (console, captured) = Console.capturing()
      let code = SimCLI.main(arguments: arguments, console: console, apps: apps, toolName: "sim-cli")
      return (code, captured.stdout + captured.stderr)
    }
    let fuzz = run(["fuzz", "--app", "NotesAppNotPersistingState", "--seeds", "1..12", "--intents", "8", "--quiet", "--out", "\(dir)/app.jsonl"])
    #expect(fuzz.0 == .failure, "\(fuzz.1)")
    let report = run(["report", "\(dir)/app.jsonl", "--html", "\(dir)/app.html", "--intents", "8", "--jobs", "2"])
    #expect(report.0 == .failure, "\(report.1)")
    #expect(report.1.contains("    axes     none: the app's own code is what to look at\n"))
    #expect(report.1.contains("    again    sim-cli fuzz --seeds "))
    #expect(report.1.contains(" --app NotesAppNotPersistingState --intents 8\n"))
    let page = try String(contentsOfFile: "\(dir)/app.html", encoding: .utf8)
    let signatures = page.components(separatedBy: "<article class=\"signature\"").count - 1
    #expect(signatures >= 2)
    #expect(page.components(separatedBy: "Minimal scenario: shrunk here from seed").count - 1 == signatures, "\(page)")
    #expect(page.components(separatedBy: "<div class=\"timeline\">").count - 1 == signatures)
  }
}
