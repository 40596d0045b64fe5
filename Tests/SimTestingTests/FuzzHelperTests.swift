import SimTesting
import Testing

/// `fuzz` and `expectFuzzPasses`: the safe design passes every seed tried; a planted bug is
/// caught at its first failing seed, shrunk to a scenario that replays it.
@Suite struct FuzzHelperTests {
  @Test func appendOnlySurvivesRandomWorkloads() {
    expectFuzzPasses(policy: "append-only", seeds: 1...30)
  }

  @Test func aPlantedBugIsCaughtWithItsShrunkScenario() throws {
    let log = IssueLog()
    var result: FuzzSummary?
    withKnownIssue("mark-first-unit is a planted bug: fuzzing must catch and shrink it") {
      result = expectFuzzPasses(policy: "mark-first-unit", seeds: 1...20)
    } matching: {
      log.matcher($0)
    }
    let summary = try #require(result)
    #expect(!summary.passed)
    #expect(summary.stoppedAtFirstFailure)
    #expect(summary.seedsRun == summary.failures.count + Int(summary.failingSeeds[0] - 1))
    let first = try #require(summary.failures.first)
    let shrunk = try #require(summary.shrunk)
    let seed = first.record.seed

    #expect(log.messages.count == 1)
    let message = try #require(log.messages.first)
    #expect(message == SimTestFailure.check(summary)?.message)
    #expect(message.hasPrefix("fuzzing mark-first-unit on the default workload: seed \(seed) lost data: "))
    #expect(message.contains("profile of seed \(seed): \(first.profile)\n"))
    for kind in AnomalyKind.allCases where first.violations.contains(where: { $0.kind == kind }) {
      let explanation = try #require(first.violations.first { $0.kind == kind }?.explanation)
      #expect(message.contains(explanation), "\(kind.rawValue) is not explained")
    }
    // The minimal scenario, indented, every line of it.
    for line in shrunk.text.split(separator: "\n") {
      #expect(message.contains("\n    \(line)\n"))
    }
    #expect(message.contains("sim-cli run \(shrunk.file.source)"))
    #expect(message.contains("sim-cli fuzz --seeds \(seed)..\(seed) --policy mark-first-unit"))
    #expect(message.contains("stranded-record — this policy has unit=mark-first:"))

    // What the message tells the developer to save does replay the failure.
    let replay = ScenarioRunner.run(try inlineScenario(shrunk.text, source: shrunk.file.source)).report
    #expect(replay.count(shrunk.kind) > 0)
    #expect(shrunk.file.timeline.count < WorkloadShape().intents)
  }

  /// A smaller workload than the CLI's, to keep the test fast.
  static let small = WorkloadShape(intents: 20, deviceCounts: 2...3)

  @Test func everyFailingSeedIsListedWhenNotStoppingAtTheFirst() throws {
    let summary = try fuzz(policy: "mark-first-unit", seeds: 1...4, shape: Self.small, stopAtFirstFailure: false)
    #expect(summary.seedsRun == 4)
    #expect(!summary.stoppedAtFirstFailure)
    #expect(summary.failures.first?.shrunk != nil)
    #expect(summary.failures.dropFirst().allSatisfy { $0.shrunk == nil })
    let seeds = summary.failingSeeds.map(String.init).joined(separator: ", ")
    let message = SimTestFailure.check(summary)?.message ?? ""
    #expect(message.contains("+ actual:   \(summary.failures.count) of 4 seeds failed: \(seeds) (the first is shown)"))
    // sim-cli fuzz cannot draw this shape, so the message does not offer it; the test can.
    #expect(!message.contains("sim-cli fuzz --seeds"))
    #expect(message.contains("SIM_FUZZ_SEED=\(summary.failingSeeds[0]) swift test"))
  }

  @Test func theSummaryIsTheSameWithOneJobOrMany() throws {
    let serial = try fuzz(policy: "mark-first-unit", seeds: 1...4, shape: Self.small, stopAtFirstFailure: false)
    let parallel = try fuzz(policy: "mark-first-unit", seeds: 1...4, shape: Self.small, jobs: 3, stopAtFirstFailure: false)
    #expect(serial.failures.count >= 2)
    #expect(serial.failures.map(\.record) == parallel.failures.map(\.record))
    #expect(SimTestFailure.check(serial)?.message == SimTestFailure.check(parallel)?.message)
  }

  @Test func aMisspelledPolicyIsAnIssueNotACrash() {
    let log = IssueLog()
    withKnownIssue("a misspelled preset on purpose: the issue must suggest the right one") {
      #expect(expectFuzzPasses(policy: "apend-only", seeds: 1...1) == nil)
    } matching: {
      log.matcher($0)
    }
    #expect(log.messages.count == 1)
    #expect(log.messages.first?.hasPrefix("invalid policy \"apend-only\": unknown policy preset 'apend-only'; did you mean 'append-only'?") == true)
    #expect(throws: PolicySpec.ParseError.self) { try fuzz(policy: "apend-only", seeds: 1...1) }
  }
}
