import Foundation
import Replica
import Scenarios
import Testing

@testable import SimCLI

@Suite struct FuzzCommandTests {
  func temporaryPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
  }

  func lines(_ path: String) throws -> [String] {
    try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
  }

  func seeds(_ lines: [String]) throws -> [UInt64] {
    try lines.map { line in
      let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      return try #require((object["seed"] as? NSNumber)?.uint64Value)
    }
  }

  @Test func aCampaignWritesOneRecordPerSeedInSeedOrder() throws {
    let out = temporaryPath("fuzz") + ".jsonl"
    defer { try? FileManager.default.removeItem(atPath: out) }
    let r = runCLI("fuzz", "--seeds", "1..12", "--intents", "8", "--jobs", "2", "--out", out)
    #expect(r.code == .success, "\(r.stdout)\(r.stderr)")
    let records = try lines(out)
    #expect(try seeds(records) == Array(1...12))
    #expect(records[0].hasPrefix("{\"convergedAfter\":\""))
    #expect(records[0].contains("\",\"counts\":{\"access-leak\":0,\"concurrent-overwrite\":"))
    #expect(records[0].contains("\"minimized\":null,\"policy\":\"append-only\",\"scenario\":\"default\",\"seed\":1,\"traceHash\":"))
    #expect(runCLI("fuzz", "--seeds", "1..12", "--out", out).stderr.contains("already exists; add --resume"))
  }

  @Test func aFailingSeedIsReportedWithItsSignatureProfileAndAMinimalScenario() throws {
    let dir = temporaryPath("mins")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let r = runCLI("fuzz", "--seeds", "2..2", "--policy", "memory-outbox", "--jobs", "1", "--minimize-to", dir)
    #expect(r.code == .failure)
    #expect(
      r.stdout.hasPrefix(
        "FAIL lost-edit + resurrection + stranded-record (text=whole, outbox=memory) · signature 1, first at seed 2 · policy memory-outbox · workload default\n  profile: devices "
      ))
    #expect(r.stdout.contains("keeps lost-edit"))
    let path = dir + "/default-lost-edit+resurrection+stranded-record-seed-2.scenario"
    #expect(r.stdout.contains("reproduce: sim-cli run \(path)"))
    let replay = runCLI("run", path)
    #expect(replay.code == .failure)
    #expect(replay.stdout.contains("lost-edit"))
  }

  @Test func maxFailuresStopsTheCampaign() {
    let r = runCLI(
      "fuzz", "--seeds", "1..50", "--intents", "10", "--policy", "mark-first-unit", "--max-failures", "1", "--jobs", "2", "--format", "json")
    #expect(r.code == .failure)
    #expect(r.stdout.contains("\"failing\":1,"))
  }

  @Test func badOptionsAreUsageErrors() {
    #expect(runCLI("fuzz", "--seeds", "5..1").stderr.hasPrefix("Error: invalid value '5..1' for '--seeds'"))
    #expect(runCLI("fuzz", "--shard", "4/3").stderr.hasPrefix("Error: invalid value '4/3' for '--shard'"))
    #expect(runCLI("fuzz", "--resume").stderr.hasPrefix("Error: --resume needs --out"))
    #expect(runCLI("fuzz", "--time", "soon").code == .usage)
  }

  /// Killed with SIGKILL mid-campaign and resumed: every seed exactly once, and the same
  /// records as a campaign that was never interrupted. The kill lands right after the 137th
  /// record (a hidden hook), not after a guessed delay.
  @Test func aCampaignKilledWithSIGKILLResumesWithNoSeedLostOrRunTwice() throws {
    let out = temporaryPath("killed") + ".jsonl"
    defer { try? FileManager.default.removeItem(atPath: out) }
    let arguments = ["fuzz", "--seeds", "1..400", "--intents", "6", "--jobs", "2", "--out", out]
    let process = Process()
    process.executableURL = try builtBinary()
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(["SIM_CLI_TEST_KILL_AFTER": "137"]) { $1 }
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    let interrupted = process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
    #expect(try lines(out).count == 137)
    try #require(interrupted, "the campaign was not killed at the hook")
    let resumed = try runProcess(arguments + ["--resume"])
    #expect(resumed.code == 0, "\(resumed.stderr)")
    let done = try seeds(try lines(out))
    #expect(done == Array(1...400))
    // The same records as an uninterrupted campaign.
    let reference = FuzzCampaign(
      shape: WorkloadShape(intents: 6), policy: try PolicySpec.parse("append-only").get(), seeds: SeedPlan(lower: 1, upper: 400), jobs: 2,
      shrink: false)
    let expected = ReferenceLines()
    reference.run {
      expected.append($0.record.jsonLine)
      return true
    }
    #expect(try lines(out) == expected.lines)
  }

  @Test func aTornLastLineIsCutOffAndItsSeedRunAgain() throws {
    let out = temporaryPath("torn") + ".jsonl"
    defer { try? FileManager.default.removeItem(atPath: out) }
    #expect(runCLI("fuzz", "--seeds", "1..4", "--intents", "6", "--jobs", "1", "--out", out).code == .success)
    var text = try String(contentsOfFile: out, encoding: .utf8)
    let complete = text
    text.removeLast(20)  // seed 4's line, torn
    try text.write(toFile: out, atomically: true, encoding: .utf8)
    #expect(runCLI("fuzz", "--seeds", "1..4", "--intents", "6", "--jobs", "1", "--out", out, "--resume").code == .success)
    #expect(try String(contentsOfFile: out, encoding: .utf8) == complete)
  }

  @Test func theShardsTogetherHoldExactlyTheUnshardedLines() throws {
    var all: [String] = []
    for k in 1...2 {
      let out = temporaryPath("shard\(k)") + ".jsonl"
      defer { try? FileManager.default.removeItem(atPath: out) }
      #expect(runCLI("fuzz", "--seeds", "1..10", "--intents", "6", "--shard", "\(k)/2", "--out", out).code == .success)
      all += try lines(out)
    }
    let whole = temporaryPath("whole") + ".jsonl"
    defer { try? FileManager.default.removeItem(atPath: whole) }
    #expect(runCLI("fuzz", "--seeds", "1..10", "--intents", "6", "--out", whole).code == .success)
    let wholeLines = try lines(whole)
    #expect(all.sorted() == wholeLines.sorted())
  }

  @Test func compareTabulatesPoliciesAgainstScenarios() throws {
    let r = runCLI(
      "compare", "--scenario", "different-fields", "--scenario", "default", "--policies", "cloudkit-default,crdt", "--seeds", "1..3", "--format",
      "json")
    #expect(r.code == .success, "\(r.stderr)")
    let cells = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
    #expect(cells.count == 4)
    #expect(cells[0]["policy"] as? String == "cloudkit-default")
    #expect(cells[0]["scenario"] as? String == "different-fields")
    #expect(cells[0]["failingSeeds"] as? Int == 3)
    #expect(cells[2]["policy"] as? String == "crdt")
    #expect(cells[2]["failingSeeds"] as? Int == 0)
    let md = runCLI("compare", "--scenario", "different-fields", "--policies", "cloudkit-default,crdt", "--seeds", "1..2", "--format", "markdown")
    #expect(md.stdout.contains("| cloudkit-default |             100% |"))
  }
}

final class ReferenceLines: @unchecked Sendable {
  let lock = NSLock()
  var lines: [String] = []
  func append(_ s: String) { lock.withLock { lines.append(s) } }
}

@Suite struct ShrinkCommandTests {
  @Test func shrinkWritesTheMinimalScenarioAndItsPicture() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("shrink-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let out = dir.appendingPathComponent("min.scenario").path
    let svg = dir.appendingPathComponent("min.svg").path
    let r = runCLI("shrink", "default", "--fuzz", "--seed", "2", "--policy", "memory-outbox", "--out", out, "--timeline", svg)
    #expect(r.code == .failure)
    #expect(r.stderr.contains("kept lost-edit with"))
    #expect(r.stderr.contains("replay: sim-cli run \(out)"))
    let replay = runCLI("run", out)
    #expect(replay.code == .failure)
    #expect(replay.stdout.contains("lost-edit"))
    let picture = try String(contentsOfFile: svg, encoding: .utf8)
    #expect(picture.hasPrefix("<svg") || picture.hasPrefix("<?xml"))
    #expect(picture.contains("lost-edit"))
  }

  @Test func aRunThatDoesNotFailHasNothingToShrink() {
    let r = runCLI("shrink", "two-device-acceptance")
    #expect(r.code == .success)
    #expect(r.stderr.contains("Nothing to shrink"))
  }
}
