import Replica
import Scenarios
import Simulator
import Testing

/// A policy value runs exactly as the spec it stands for, the scenario's own lines included.
@Suite struct CustomPolicyRunTests {
  /// `retention-zombie` resurrects a row when the token outlives the retention; with a 60-day
  /// `retention` line it does not. The line must reach a `SyncPolicy` value as it reaches a spec.
  @Test(arguments: [nil, SimDuration.days(60)])
  func theScenariosRetentionLineAppliesToAPolicyValue(retention: SimDuration?) throws {
    var file = try Scenario.load("retention-zombie")
    file.retention = retention
    let spec = ScenarioRunner.run(file, policy: try PolicySpec.parse("cloudkit-default").get()).report
    let value = ScenarioRunner.run(file, policy: "cloudkit-default" as StandardPolicy).report
    #expect(value.counts == spec.counts)
    #expect(value.traceHash == spec.traceHash)
    #expect(value.settings.retention == spec.settings.retention)
    #expect(spec.counts[.resurrection] == (retention == nil ? 1 : 0))
  }

  /// A policy of one's own: `sim-cli` cannot load it, so the report replays it in Swift.
  struct KeepEverything: SyncPolicy {
    var base: StandardPolicy = "append-only"
    var name: String { "keep-everything" }
    var settings: PolicySettings { base.settings }
    func serverSave(_ write: RecordWrite, current: RecordState?, context: MergeContext) -> SaveDecision {
      base.serverSave(write, current: current, context: context)
    }
    func deviceApply(remote: RecordState, local: RecordState?, pending: FieldMask?, context: MergeContext) -> RecordState {
      base.deviceApply(remote: remote, local: local, pending: pending, context: context)
    }
  }

  /// A device applies a fetched copy without asking the policy only when the policy is a
  /// `StandardPolicy` (which takes the server's copy when nothing is pending); a policy of one's
  /// own is asked for every copy, pending edits or not.
  final class Calls: @unchecked Sendable { var withNothingPending = 0 }
  struct CountingApplies: SyncPolicy {
    var base: StandardPolicy = "append-only"
    let calls: Calls
    var name: String { "counting-applies" }
    var settings: PolicySettings { base.settings }
    func serverSave(_ write: RecordWrite, current: RecordState?, context: MergeContext) -> SaveDecision {
      base.serverSave(write, current: current, context: context)
    }
    func deviceApply(remote: RecordState, local: RecordState?, pending: FieldMask?, context: MergeContext) -> RecordState {
      if pending == nil { calls.withNothingPending += 1 }
      return base.deviceApply(remote: remote, local: local, pending: pending, context: context)
    }
  }

  @Test func aPolicyOfOnesOwnIsAskedForEveryFetchedCopy() throws {
    let file = try Scenario.load("two-device-acceptance")
    let calls = Calls()
    let mine = ScenarioRunner.run(file, seed: 1, policy: CountingApplies(calls: calls)).report
    #expect(calls.withNothingPending > 0)
    let standard = ScenarioRunner.run(file, seed: 1, policy: "append-only" as StandardPolicy).report
    #expect(mine.traceHash == standard.traceHash)
    #expect(mine.counts == standard.counts)
  }

  @Test func theReproductionOfAPolicyValueIsOneThatRuns() throws {
    let file = try Scenario.load("fat-note-lww")
    let standard = ScenarioRunner.run(file, seed: 3, policy: "crdt" as StandardPolicy).report
    #expect(standard.reproduction == "sim-cli run fat-note-lww --seed 3 --policy crdt")
    #expect(standard.customPolicyType == nil)
    let mine = ScenarioRunner.run(file, seed: 3, policy: KeepEverything()).report
    #expect(mine.reproduction == "ScenarioRunner.run(try Scenario.load(\"fat-note-lww\"), seed: 3, policy: KeepEverything())")
    #expect(mine.text.contains("reproduce in Swift (sim-cli cannot load the policy keep-everything): ScenarioRunner.run("))
  }
}
