import Foundation
import Scenarios
import SimSyncEngine
import Testing

@testable import SimCLI

/// What `bench` reports, on tiny sizes (a debug build; no figure is asserted: these are
/// benchmarks, not timed tests).
@Suite struct BenchCommandTests {
  static func json(_ text: String) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
  }

  @Test func scaleIsJudgedByTheOracleAndCountsAnomaliesByKind() throws {
    let r = runCLI("bench", "scale", "--devices", "3", "--intents", "120", "--format", "json")
    #expect(r.code == .success, "\(r.stderr)")
    let j = try Self.json(r.stdout)
    #expect(j["oracle"] as? Bool == true)
    #expect(j["converged"] as? Bool == true)
    let anomalies = try #require(j["anomalies"] as? [String: Int])
    #expect(
      anomalies.keys.sorted() == [
        "access-leak", "concurrent-overwrite", "dangling-reference", "delete-update-conflict", "divergence", "dropped-event", "duplicate-event",
        "logical-duplicate", "lost-edit", "missing-asset", "phantom-value", "resurrection", "stale-overwrite", "stalled-sync", "stranded-record",
      ])
    // The safe design loses nothing: every anomaly at this size is informational.
    for kind in ["lost-edit", "stale-overwrite", "resurrection", "divergence", "phantom-value"] { #expect(anomalies[kind] == 0, "\(kind)") }
    #expect((j["recordsMoved"] as? Int ?? 0) > 0)
    #expect((j["events"] as? Int ?? 0) > 0)
  }

  @Test func aFixedNumberOfRunsIsExactlyThatMany() throws {
    let r = runCLI("bench", "fuzz", "--runs", "7", "--intents", "10", "--format", "json")
    #expect(r.code == .success, "\(r.stderr)")
    let j = try Self.json(r.stdout)
    #expect(j["seeds"] as? Int == 7)
    #expect(j["costPerEventVsKernel"] is Double)
    #expect((j["kernelEventsPerSecond"] as? Int ?? 0) > 0)
    #expect(runCLI("bench", "scenario", "--runs", "0").code == .usage)
  }

  /// `bench scenario` times the same runs again without the oracle and the report, and gives
  /// the world alone per second and per event beside the kernel.
  @Test func theScenarioBenchSaysWhatTheWorldAloneCosts() throws {
    let r = runCLI("bench", "scenario", "--runs", "40", "--format", "json")
    #expect(r.code == .success, "\(r.stderr)")
    let j = try Self.json(r.stdout)
    #expect(j["runs"] as? Int == 40)
    let whole = try #require(j["runsPerSecond"] as? Int)
    let world = try #require(j["worldOnlyRunsPerSecond"] as? Int)
    #expect(world > 0 && whole > 0)
    #expect((j["worldOnlyNanosecondsPerEvent"] as? Int ?? 0) > 0)
    #expect(j["worldOnlyCostPerEventVsKernel"] is Double)
    let text = runCLI("bench", "scenario", "--runs", "5")
    #expect(text.stdout.contains("the world alone (the same runs with no oracle and no report"))
  }

  /// `bench app`: seeds of the app's fuzz workload, exactly as many as asked, with the
  /// simulator's and the app's time per delegate call and what the app wrote to its disk.
  @Test func appRunsTheAppsFuzzWorkloadAndSplitsTheTime() throws {
    let apps = [AppUnderTest(NotesApp.self), AppUnderTest(RemindersApp.self)]
    let (console, captured) = Console.capturing()
    let code = SimCLI.main(arguments: ["bench", "app", "--runs", "2", "--format", "json"], console: console, apps: apps)
    #expect(code == .success, "\(captured.stderr)")
    let j = try Self.json(captured.stdout)
    #expect(j["benchmark"] as? String == "app")
    #expect(j["app"] as? String == "NotesApp", "NotesApp by default")
    #expect(j["seedsPerSecond"] is Int)
    #expect(j["seeds"] as? Int == 2)
    #expect((j["delegateCallsPerSeed"] as? Double ?? 0) > 0)
    #expect((j["simulatorNanosecondsPerDelegateCall"] as? Int ?? 0) > 0)
    #expect((j["appNanosecondsPerDelegateCall"] as? Int ?? 0) > 0)
    #expect((j["diskBytesWrittenPerSeed"] as? Int ?? 0) > 0)
    let (textConsole, text) = Console.capturing()
    #expect(SimCLI.main(arguments: ["bench", "app", "--app", "RemindersApp", "--runs", "2"], console: textConsole, apps: apps) == .success)
    #expect(text.stdout.contains("app RemindersApp: "), "\(text.stdout)")
    #expect(text.stdout.contains("seeds/s on one job"))
    #expect(text.stdout.contains("per delegate call"))
    let (noApps, none) = Console.capturing()
    #expect(SimCLI.main(arguments: ["bench", "app", "--runs", "1"], console: noApps, apps: []) == .usage)
    #expect(none.stderr.contains("built without apps"), "\(none.stderr)")
  }

  @Test func curveIsASubjectWithADidYouMean() {
    #expect(runCLI("bench", "curv").stderr.contains("Did you mean 'curve'?"))
    #expect(runCLI("bench", "--help").stdout.contains("curve"))
  }
}
