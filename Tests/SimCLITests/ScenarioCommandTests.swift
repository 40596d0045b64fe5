import Foundation
import Scenarios
import Testing

@testable import SimCLI

@Suite struct ScenarioCommandTests {
  @Test func runPrintsTheReportAndExitsZeroWhenExpectationsHold() {
    let r = runCLI("run", "two-device-acceptance")
    #expect(r.code == .success, "\(r.stderr)")
    #expect(r.stdout.hasPrefix("two-device-acceptance — policy append-only, seed 1\n✓ expectations held — found no violations"))
    #expect(r.stdout.contains("reproduce: sim-cli run two-device-acceptance --seed 1 --policy append-only"))
  }

  @Test func runExitsOneWhenAnExpectationFails() {
    // fat-note-lww expects exactly one lost edit; the CRDT loses none.
    let r = runCLI("run", "fat-note-lww", "--policy", "crdt")
    #expect(r.code == .failure)
    #expect(r.stdout.contains("✗ 1 of 2 expectations failed"))
  }

  @Test func runJSONFollowsTheContract() throws {
    let r = runCLI("run", "fat-note-lww", "--format", "json")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    for key in ["scenario", "policy", "seed", "traceHash", "converged", "counts", "anomalies", "expectations", "stats"] {
      #expect(object[key] != nil, "missing \(key)")
    }
    let counts = try #require(object["counts"] as? [String: Int])
    #expect(counts.count == AnomalyKind.allCases.count)
    #expect(counts["lost-edit"] == 1)
  }

  @Test func aBadScenarioFileExits65WithADiagnostic() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(getpid()).scenario").path
    try "devices iPad phone\nat 1s ipad sync\n".write(toFile: path, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let r = runCLI("run", path)
    #expect(r.code == .dataError)
    #expect(r.stderr.hasPrefix("\(path):2:7: error: unknown device 'ipad'; did you mean 'iPad'?"))
    #expect(runCLI("check", path).code == .dataError)
  }

  @Test func anUnknownScenarioNameGetsADidYouMean() {
    let r = runCLI("run", "fat-note-lw")
    #expect(r.code == .usage)
    #expect(r.stderr.contains("did you mean 'fat-note-lww'?"))
  }

  @Test func aBadPolicyIsAUsageError() {
    let r = runCLI("run", "fat-note-lww", "--policy", "crdt winer=clock")
    #expect(r.code == .usage)
    #expect(r.stderr.contains("unknown policy key 'winer'; did you mean 'winner'?"))
  }

  @Test func listShowsEveryNamedScenarioWithItsLesson() {
    let r = runCLI("list")
    #expect(r.code == .success)
    #expect(r.stdout.split(separator: "\n").count == Scenario.builtInNames.count)
    #expect(r.stdout.split(separator: "\n").contains { $0.hasPrefix("two-device-acceptance ") && $0.hasSuffix("Nothing may be lost.") })
  }

  @Test func checkReportsCloudKitSafetyAsWarnings() {
    let r = runCLI("check", "unsafe-schema", "two-device-acceptance")
    #expect(r.code == .success)
    #expect(r.stdout.contains("warning: Highlight.color is required and has no default"))
    #expect(r.stdout.contains("warning: Highlight.note is a non-optional reference"))
    // Each warning says where the declaration is.
    #expect(r.stdout.contains("  unsafe-schema:11: warning: Highlight.color is required"))
    // Each says Apple's rule and the fix, in scenario syntax (the scenario declares the type).
    #expect(
      r.stdout.contains(
        "\n    Apple's rule: All attributes must be optional or have a default value.\n    fix: write `color: string?` or add `= …`\n"))
    // "ok" only without warnings: a file with some is headed by their count.
    #expect(!r.stdout.contains("unsafe-schema: ok"), "\(r.stdout)")
    #expect(r.stdout.hasPrefix("unsafe-schema: 2 CloudKit warnings (2 devices, 2 types, 2 timeline lines, policy append-only):\n"), "\(r.stdout)")
    #expect(r.stdout.contains("two-device-acceptance: ok (2 devices, 3 types, 11 timeline lines, policy append-only)\n"), "\(r.stdout)")
  }

  /// `--strict`: a warning fails the check (exit 1); a file that does not parse is still 65; a
  /// clean file is 0 either way.
  @Test func checkStrictFailsOnWarnings() {
    #expect(runCLI("check", "unsafe-schema", "--strict").code == .failure)
    #expect(runCLI("check", "two-device-acceptance", "--strict").code == .success)
    #expect(runCLI("check", "two-device-acceptance", "unsafe-schema").code == .success)
    #expect(runCLI("check", "unsafe-schema", "nope", "--strict").code == .usage)
    let json = runCLI("check", "unsafe-schema", "two-device-acceptance", "--strict", "--format", "json")
    #expect(json.code == .failure)
    #expect(json.stdout.contains("\"ok\":false,\"parsed\":true,\"warnings\":2"), "\(json.stdout)")
    #expect(json.stdout.contains("\"ok\":true,\"parsed\":true,\"warnings\":0"), "\(json.stdout)")
  }

  /// A type whose key the import already declared as `unique-by` is told only to drop `unique`,
  /// not to declare what it declares (what `import` writes for a SwiftData `@Attribute(.unique)`).
  @Test func checkDoesNotAskForAUniqueByAlreadyDeclared() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("check-unique-\(getpid()).scenario").path
    try "devices a b\ntype Trip unique-by name\n  name: string = \"\" unique\ntype Tag\n  code: string = \"\" unique\n".write(
      toFile: path, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let r = runCLI("check", path)
    #expect(r.code == .success)
    #expect(
      r.stdout.contains(
        "Trip.name is unique; CloudKit cannot enforce unique constraints, so Trip records will never upload.\n    Apple's rule: CloudKit integration does not support unique constraints.\n    fix: remove `unique`: `type Trip unique-by …` already states the key"
      ), "\(r.stdout)")
    #expect(!r.stdout.contains("declare `type Trip unique-by name`"), "\(r.stdout)")
    #expect(r.stdout.contains("fix: remove `unique`, declare `type Tag unique-by code`"), "\(r.stdout)")
  }

  @Test func checkJSONCarriesDiagnosticsAndPlacedFindings() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("check-json-\(getpid()).scenario").path
    try "devices a\nat 1s a frobnicate n1\npolicy crdt winner=clok\n".write(toFile: path, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let r = runCLI("check", "unsafe-schema", path, "nope", "--format", "json")
    #expect(r.code == .dataError)
    #expect(r.stderr.isEmpty, "\(r.stderr)")
    let value = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]
    let files = try #require(value)
    #expect(files.count == 3)
    let findings = try #require(files[0]["findings"] as? [[String: Any]])
    #expect(findings.map { $0["line"] as? Int } == [11, 12])
    #expect(findings.allSatisfy { $0["severity"] as? String == "warning" })
    #expect(files[1]["ok"] as? Bool == false)
    let diagnostics = try #require(files[1]["diagnostics"] as? [[String: Any]])
    #expect(diagnostics.map { [$0["line"] as? Int, $0["column"] as? Int] } == [[2, 9], [3, 1], [3, 20]])
    #expect(diagnostics.last?["suggestion"] as? String == "clock")
    #expect((diagnostics.first?["message"] as? String)?.hasPrefix("unknown action 'frobnicate'") == true)
    #expect((files[2]["error"] as? String)?.hasPrefix("no scenario named 'nope'") == true)
  }

  @Test func policiesListsEveryPreset() {
    let r = runCLI("policies")
    for name in ["cloudkit-default", "crdt", "append-only", "naive-refetch"] { #expect(r.stdout.contains("\(name)")) }
    #expect(r.stdout.contains("granularity=record winner=arrival save=all-keys"))
  }

  @Test func traceIsWrittenAsJSONLines() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(getpid()).jsonl").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    let r = runCLI("run", "skewed-clock", "--trace", path)
    #expect(r.code == .success)
    let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
    #expect(lines.count > 10)
    for line in lines { #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil) }
    #expect(lines.first?.contains("\"event\":\"intent\"") == true)
    // Names, not indices: devices, records and intents as the scenario wrote them.
    #expect(lines.first?.contains("\"device\":\"iPad\"") == true)
    #expect(lines.first?.contains("\"intent\":\"i1\"") == true)
    #expect(lines.contains { $0.contains("\"event\":\"decide\"") && $0.contains("\"record\":\"n1\"") })
  }

  @Test func aRunGivesTheSameReportInSeparateProcesses() throws {
    let inProcess = runCLI("run", "three-device-fanout", "--format", "json").stdout
    let a = try runProcess(["run", "three-device-fanout", "--format", "json"])
    let b = try runProcess(["run", "three-device-fanout", "--format", "json"])
    #expect(a.code == 0)
    #expect(a.stdout == b.stdout)
    #expect(a.stdout == inProcess)
  }

  @Test func namedScenariosAreFoundFromAnyWorkingDirectory() throws {
    let process = Process()
    process.executableURL = try builtBinary()
    process.arguments = ["run", "skewed-clock", "--format", "json"]
    process.currentDirectoryURL = URL(fileURLWithPath: "/")
    let out = Pipe()
    process.standardOutput = out
    process.standardError = Pipe()
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    #expect(String(decoding: data, as: UTF8.self).contains("\"scenario\":\"skewed-clock\""))
  }
}
