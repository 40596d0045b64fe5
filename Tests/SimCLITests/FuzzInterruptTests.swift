import Foundation
import Testing

@testable import SimCLI

/// Ctrl-C and SIGTERM stop a campaign cleanly: the records written are whole, the summary and
/// the command that continues are printed, the exit code says which signal, and continuing
/// gives the same records as a campaign never interrupted. The signal is sent by the process to
/// itself right after a given record (a hidden hook), not after a guessed delay.
@Suite struct FuzzInterruptTests {
  func temporaryPath(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
  }

  func lines(_ path: String) throws -> [String] {
    try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
  }

  /// The command printed after `continue with:` / `not run yet:`, as arguments for sim-cli.
  func continuation(_ stdout: String) throws -> [String] {
    let lines = stdout.split(separator: "\n").map(String.init)
    let index = try #require(lines.firstIndex { $0.hasPrefix("stopped by ") })
    let words = lines[index + 1].split(separator: " ").map(String.init)
    try #require(Array(words.prefix(2)) == ["sim-cli", "fuzz"], "\(lines[index + 1])")
    return Array(words.dropFirst())
  }

  func run(_ arguments: [String], signal: String, after: Int) throws -> (code: Int32, stdout: String, stderr: String) {
    var environment = ProcessInfo.processInfo.environment
    environment["SIM_CLI_TEST_SIGNAL_AFTER"] = String(after)
    environment["SIM_CLI_TEST_SIGNAL"] = signal
    return try runProcess(arguments, environment: environment)
  }

  @Test(arguments: [("INT", Int32(130)), ("TERM", Int32(143))])
  func aSignalStopsCleanlyAndTheCampaignResumesToTheSameRecords(signal: String, code: Int32) throws {
    let out = temporaryPath("stopped") + ".jsonl"
    let reference = temporaryPath("whole") + ".jsonl"
    let dir = temporaryPath("mins")
    defer { for path in [out, reference, dir] { try? FileManager.default.removeItem(atPath: path) } }
    let arguments = ["fuzz", "--policy", "memory-outbox", "--seeds", "1..12", "--intents", "8", "--jobs", "2", "--minimize-to", dir]
    let stopped = try run(arguments + ["--out", out], signal: signal, after: 4)
    #expect(stopped.code == code, "\(stopped.stderr)")
    #expect(try lines(out).count == 4)
    #expect(stopped.stdout.contains("by signature:"))
    #expect(stopped.stdout.contains("stopped by SIG\(signal): 4 records of this run written to \(out); continue with:\n"))
    #expect(stopped.stdout.hasSuffix(" · stopped by SIG\(signal)\n"))
    let again = try continuation(stopped.stdout)
    #expect(again.last == "--resume")
    let resumed = try runProcess(again)
    #expect(resumed.code == 1, "\(resumed.stderr)")
    #expect(resumed.stdout.contains("8 seeds (+4 from \(out))"))
    // The same records, minimized paths included, as a campaign run in one go.
    #expect(runCLI(arguments + ["--out", reference]).code == .failure)
    #expect(try lines(out) == lines(reference))
  }

  @Test func withoutOutTheContinuationRunsTheSeedsNotYetRun() throws {
    let stopped = try run(["fuzz", "--seeds", "1..10", "--intents", "6", "--jobs", "2"], signal: "INT", after: 3)
    #expect(stopped.code == 130)
    #expect(stopped.stdout.contains("there is no --out to resume from (pass --out FILE.jsonl to make a campaign resumable)"))
    #expect(try continuation(stopped.stdout) == ["fuzz", "--seeds", "4..10", "--intents", "6", "--jobs", "2"])
    #expect(stopped.stdout.contains("fuzz append-only on default: 3 seeds, 0 failing · "))
  }

  @Test func quietStillPrintsTheContinuation() throws {
    let out = temporaryPath("quiet") + ".jsonl"
    defer { try? FileManager.default.removeItem(atPath: out) }
    let stopped = try run(["fuzz", "--seeds", "1..10", "--intents", "6", "--out", out, "--quiet"], signal: "TERM", after: 2)
    #expect(stopped.code == 143)
    let printed = stopped.stdout.split(separator: "\n")
    #expect(printed.count == 3, "\(stopped.stdout)")
    #expect(try continuation(stopped.stdout) == ["fuzz", "--seeds", "1..10", "--intents", "6", "--out", out, "--quiet", "--resume"])
  }

  @Test func theContinuationKeepsTheTimeThatWasLeft() throws {
    let args = ParsedArguments(command: "fuzz", values: ["--time": ["8h"], "--out": ["r.jsonl"], "--policy": ["crdt text=merge"]])
    #expect(
      FuzzCommand.continueCommand(args, nextSeed: 5, lastSeed: .max, timeLeft: 100.2)
        == "sim-cli fuzz --policy 'crdt text=merge' --time 101s --out r.jsonl --resume")
    let noOut = ParsedArguments(command: "fuzz", values: ["--time": ["8h"]])
    #expect(
      FuzzCommand.continueCommand(noOut, nextSeed: 5, lastSeed: .max, timeLeft: 0.1) == "sim-cli fuzz --seeds 5.. --time 1s")
    // An open range is what --time campaigns run, and it parses back only with --time.
    #expect(SeedRange.parse("5..", open: true) == SeedRange(lower: 5, upper: .max))
    #expect(SeedRange.parse("5..") == nil)
    #expect(runCLI("fuzz", "--seeds", "5..").code == .usage)
    #expect(runCLI("compare", "--seeds", "5..").code == .usage)
  }
}
