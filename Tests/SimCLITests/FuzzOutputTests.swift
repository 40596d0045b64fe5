import Foundation
import Replica
import Scenarios
import Testing

@testable import SimCLI

/// `fuzz` output for people: failing seeds grouped by signature, each printed once with one
/// minimal scenario, a summary by kind and by signature, the same for any `--jobs`.
///
/// Under `memory-outbox` with 8 intents, seeds 3 and 7 strand a record and nothing else, and
/// seed 5 also loses an edit: two signatures among seeds 3...7.
@Suite struct FuzzOutputTests {
  func temporaryPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
  }

  /// Everything but the last line (the timing line: seeds/s, elapsed, jobs).
  func withoutTimingLine(_ text: String) -> String {
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    if lines.last == "" { lines.removeLast() }
    if !lines.isEmpty { lines.removeLast() }
    return lines.joined(separator: "\n")
  }

  @Test func verboseCampaignsSayWhatTheSwarmDrew() throws {
    let r = runCLI("fuzz", "--policy", "append-only", "--seeds", "1..200", "--intents", "8", "--verbose")
    #expect(r.code == .success, "\(r.stdout)")
    let line = try #require(r.stdout.split(separator: "\n").first { $0.hasPrefix("swarm (of 200 seeds): ") })
    // Every dimension is named, and the CloudKit ones are drawn by some seeds.
    for name in SwarmProfile.dimensionNames { #expect(line.contains(" \(name) "), "\(name)") }
    for name in ["quota", "throttled", "reject lines", "atomic zone", "smaller limits", "zone deletion", "signed out"] {
      #expect(!line.contains(" \(name) 0"), "\(name) never drawn: \(line)")
    }
    #expect(!runCLI("fuzz", "--policy", "append-only", "--seeds", "1..20", "--intents", "8").stdout.contains("swarm ("))
  }

  @Test func twoSeedsWithTheSameKindsAreOneSignatureWithOneFile() throws {
    let dir = temporaryPath("signatures")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let r = runCLI("fuzz", "--policy", "memory-outbox", "--seeds", "3..8", "--intents", "8", "--jobs", "2", "--minimize-to", dir)
    #expect(r.code == .failure)
    let stranded = "stranded-record (outbox=memory)"
    #expect(r.stdout.components(separatedBy: "FAIL \(stranded) · signature 1, first at seed 3").count == 2, "\(r.stdout)")
    #expect(r.stdout.contains("FAIL lost-edit + divergence (text=whole, outbox=memory) · signature 2, first at seed 8"))
    #expect(!r.stdout.contains("FAIL seed"))
    // The summary counts seeds per signature, most first.
    #expect(r.stdout.contains("      3      3  \(stranded)"), "\(r.stdout)")
    #expect(r.stdout.contains("      1      8  lost-edit + divergence"))
    #expect(r.stdout.contains("by kind:\n  kind                  seeds  anomalies\n  lost-edit                 1          1\n"), "\(r.stdout)")
    let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
    #expect(files == ["default-lost-edit+divergence-seed-8.scenario", "default-stranded-record-seed-3.scenario"])
    let replay = runCLI("run", dir + "/default-stranded-record-seed-3.scenario")
    #expect(replay.code == .failure)
    #expect(replay.stdout.contains("stranded-record"))
  }

  @Test func theOutputIsTheSameForAnyNumberOfJobs() {
    let arguments = ["fuzz", "--policy", "memory-outbox", "--seeds", "1..10", "--intents", "8"]
    let one = runCLI(arguments + ["--jobs", "1"])
    let two = runCLI(arguments + ["--jobs", "2"])
    #expect(one.code == .failure)
    #expect(withoutTimingLine(one.stdout) == withoutTimingLine(two.stdout))
    #expect(one.stdout.contains("by signature:"))
  }

  @Test func eachSignatureIsPrintedOnceAndTheOutputStaysShort() {
    let r = runCLI("fuzz", "--policy", "mark-first-unit", "--seeds", "1..40", "--intents", "8", "--jobs", "2")
    let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false)
    let headers = lines.filter { $0.hasPrefix("FAIL ") }
    #expect(Set(headers.map { $0.split(separator: "·")[0] }).count == headers.count, "a signature printed twice")
    #expect(headers.count >= 2)
    #expect(!r.stdout.contains("FAIL seed"))
    #expect(lines.count <= 200, "\(lines.count) lines")
    // Only the first few minimal scenarios are printed in full; the rest say how to save them.
    #expect(r.stdout.components(separatedBy: "    | scenario ").count - 1 == min(headers.count, FuzzCommand.inlineScenarios))
  }

  /// After ``FuzzCommand/fullBlocks`` signatures, each new one is two lines: the signature and
  /// where its minimal scenario went (or the command that runs its seed again); the summary
  /// table has one row per signature, with no minimal-scenario line under it.
  @Test func signaturesAfterTheFirstTenTakeTwoLines() throws {
    let r = runCLI("fuzz", "--policy", "mark-first-unit", "--seeds", "1..60", "--intents", "20", "--jobs", "2")
    let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let headers = lines.indices.filter { lines[$0].hasPrefix("FAIL ") }
    try #require(headers.count > FuzzCommand.fullBlocks, "\(headers.count) signatures")
    for (n, at) in headers.enumerated() {
      let compact = n >= FuzzCommand.fullBlocks
      #expect(lines[at].contains(" · policy mark-first-unit") != compact, "\(lines[at])")
      if compact {
        #expect(lines[at + 1].hasPrefix("  again:     "))
        #expect(lines[at + 2].hasPrefix("FAIL ") || lines[at + 2].isEmpty, "\(lines[at + 2])")
      }
    }
    let table = try #require(r.stdout.components(separatedBy: "by signature:\n").last)
    #expect(!table.contains("minimal scenario: "))
    #expect(table.contains("  minimal scenarios: not saved (--minimize-to DIR saves them; report --html shrinks them)\n"))
  }

  @Test func quietPrintsTheSummaryLineOnlyAndVerboseEveryFailingSeed() throws {
    let arguments = ["fuzz", "--policy", "memory-outbox", "--seeds", "3..7", "--intents", "8", "--jobs", "2"]
    let quiet = runCLI(arguments + ["--quiet"])
    #expect(quiet.code == .failure)
    #expect(quiet.stdout.split(separator: "\n").count == 1)
    #expect(quiet.stdout.hasPrefix("fuzz memory-outbox on default: 5 seeds, 3 failing · "))
    #expect(quiet.stderr.isEmpty)
    let verbose = runCLI(arguments + ["--verbose"])
    for seed in [3, 5, 7] { #expect(verbose.stdout.contains("FAIL seed \(seed) · policy memory-outbox · workload default\n")) }
    #expect(verbose.stdout.contains("  signature: stranded-record (outbox=memory) (first at seed 3)\n"))
    #expect(verbose.stdout.contains("FAIL stranded-record (outbox=memory) · signature 1, first at seed 3"))
    #expect(verbose.stdout.contains("by signature:"))
    let both = runCLI(arguments + ["--quiet", "--verbose"])
    #expect(both.code == .usage)
    #expect(both.stderr.contains("--quiet and --verbose cannot be used together"))
  }

  @Test func theJSONSummaryListsTheSignatures() throws {
    let r = runCLI("fuzz", "--policy", "memory-outbox", "--seeds", "3..8", "--intents", "8", "--format", "json")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    let signatures = try #require(object["signatures"] as? [[String: Any]])
    #expect(
      signatures.map { $0["signature"] as? String } == [
        "stranded-record (outbox=memory)", "lost-edit + divergence (text=whole, outbox=memory)",
      ])
    #expect(signatures.map { $0["seeds"] as? Int } == [3, 1])
    #expect(object["stoppedBy"] == nil)
  }

  @Test func aSignatureIsTheKindsAndTheAxesOfThePolicyThatCauseThem() throws {
    let cloudkit = try PolicySpec.parse("cloudkit-default").get().settings
    let markFirst = try PolicySpec.parse("mark-first-unit").get().settings
    let crdt = try PolicySpec.parse("crdt").get().settings
    #expect(
      FuzzSignature(kinds: [.strandedRecord, .lostEdit], settings: cloudkit).text
        == "lost-edit + stranded-record (granularity=record, save=all-keys, text=whole)")
    #expect(
      FuzzSignature(kinds: [.strandedRecord, .lostEdit], settings: markFirst).text == "lost-edit + stranded-record (text=whole, unit=mark-first)")
    #expect(FuzzSignature(kinds: [.phantomValue], settings: crdt).text == "phantom-value (no usual policy axis)")
    #expect(FuzzSignature(kinds: [.staleOverwrite, .lostEdit], settings: cloudkit).slug == "lost-edit+stale-overwrite")
    // Informational kinds are not part of a signature; a seed with none of the others passed.
    var counts = [Int](repeating: 0, count: AnomalyKind.allCases.count)
    counts[AnomalyKind.concurrentOverwrite.ordinal] = 3
    let passing = FuzzRecord(seed: 1, policy: "p", scenario: "s", traceHash: "0", violations: 0, counts: counts, minimized: nil)
    #expect(FuzzSignature(record: passing, settings: cloudkit) == nil)
  }

  @Test func findingsGroupByKindsInSeedOrderAndKeepAKindNotYetShown() throws {
    let settings = try PolicySpec.parse("mark-first-unit").get().settings
    func record(_ seed: UInt64, _ kinds: [AnomalyKind]) -> FuzzRecord {
      var counts = [Int](repeating: 0, count: AnomalyKind.allCases.count)
      for kind in kinds { counts[kind.ordinal] += 1 }
      return FuzzRecord(seed: seed, policy: "p", scenario: "s", traceHash: "0", violations: kinds.count, counts: counts, minimized: nil)
    }
    var findings = FuzzFindings(settings: settings)
    #expect(findings.add(record(1, [.lostEdit])) == .new(FuzzSignature(kinds: [.lostEdit], settings: settings), keep: .lostEdit))
    #expect(findings.add(record(2, [])) == .passed)
    // lost-edit is kept by signature 1's scenario: this one keeps stranded-record.
    let second = findings.add(record(3, [.strandedRecord, .lostEdit]))
    #expect(second == .new(FuzzSignature(kinds: [.lostEdit, .strandedRecord], settings: settings), keep: .strandedRecord))
    #expect(findings.add(record(4, [.lostEdit])) == .known(index: 0))
    #expect(findings.groups.map(\.seeds) == [2, 1])
    #expect(findings.groups.map(\.firstSeed) == [1, 3])
    #expect((findings.seeds, findings.failing) == (4, 3))
    #expect(findings.seedsByKind[AnomalyKind.lostEdit.ordinal] == 3)
  }

  /// After `--resume`, the kinds of the signatures an earlier run found are not "shown above":
  /// this run's output does not have their blocks, so a new signature made of them is printed in
  /// full (`fuzz` prints a brief block only when every kind is among ``FuzzFindings/kindsSeen``).
  /// Run by hand: `fuzz --policy cloudkit-default --seeds 1..60 --max-failures 1 --out F`, then
  /// `--resume`: signature 2 (lost-edit) printed "(each of its kinds is shown above)" though only
  /// the first run had printed lost-edit; it now prints its profile and anomaly.
  @Test func kindsFoundByAnEarlierRunAreNotShownAbove() throws {
    let settings = try PolicySpec.parse("cloudkit-default").get().settings
    func record(_ seed: UInt64, _ kinds: [AnomalyKind]) -> FuzzRecord {
      var counts = [Int](repeating: 0, count: AnomalyKind.allCases.count)
      for kind in kinds { counts[kind.ordinal] += 1 }
      return FuzzRecord(seed: seed, policy: "p", scenario: "s", traceHash: "0", violations: kinds.count, counts: counts, minimized: nil)
    }
    var findings = FuzzFindings(settings: settings)
    _ = findings.add(record(1, [.lostEdit, .logicalDuplicate]), earlier: true)
    #expect(findings.kindsSeen.isEmpty)
    _ = findings.add(record(6, [.lostEdit]))
    #expect(findings.kindsSeen == [.lostEdit])
    _ = findings.add(record(15, [.logicalDuplicate]))
    #expect(findings.kindsSeen == [.lostEdit, .logicalDuplicate])
  }

  @Test func theETAIsTheEarlierOfTheTimeBudgetAndTheSeedsLeft() {
    #expect(FuzzProgress.eta(done: 10, total: 100, elapsed: 1, timeLimit: nil) == 9)
    #expect(FuzzProgress.eta(done: 10, total: 100, elapsed: 1, timeLimit: 5) == 4)
    #expect(FuzzProgress.eta(done: 10, total: 20, elapsed: 1, timeLimit: 60) == 1)
    #expect(FuzzProgress.eta(done: 10, total: nil, elapsed: 1, timeLimit: 30) == 29)
    #expect(FuzzProgress.eta(done: 10, total: nil, elapsed: 40, timeLimit: 30) == 0)
    #expect(FuzzProgress.eta(done: 10, total: nil, elapsed: 1, timeLimit: nil) == nil)
  }
}

/// `runCLI` with an array of arguments.
func runCLI(_ arguments: [String]) -> (code: ExitCode, stdout: String, stderr: String) {
  let (console, captured) = Console.capturing()
  let code = SimCLI.main(arguments: arguments, console: console)
  return (code, captured.stdout, captured.stderr)
}
