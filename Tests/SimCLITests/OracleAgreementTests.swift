import Foundation
import ReferenceOracle
import Replica
import Scenarios
import Testing

@testable import SimCLI

/// The oracle against the independent reference checker (`ReferenceOracle`): a slice of what
/// `sim-cli selftest --oracles` runs at scale.
@Suite struct OracleAgreementTests {
  /// 2 seeds under each preset (25 of them: 50 runs, each judged twice from scratch; 5 seeds in
  /// the nightly run, `SIM_NIGHTLY=1`); CI's `selftest --oracles --seeds 1..300` runs many more
  /// in the release build. (Fewer here to keep `swift test` within its 30 s on CI's machine.)
  @Test(arguments: OracleAgreement.presets.map(\.description))
  func bothOraclesAgreeOnFuzzSeeds(preset: String) throws {
    let policy = try PolicySpec.parse(preset).get()
    let offset = UInt64(OracleAgreement.presets.firstIndex { $0.description == preset }! * 1_000)
    let seeds: UInt64 = ProcessInfo.processInfo.environment["SIM_NIGHTLY"] == "1" ? 5 : 2
    for seed in (1 + offset)...(seeds + offset) {
      let difference = OracleAgreement.compare(seed: seed, policy: policy)
      #expect(difference == nil, "\(difference.map(String.init(describing:)) ?? "")")
    }
  }

  @Test func theReferenceSeesTheReorderingAsConcurrentToo() throws {
    // The oracle-truth reordering (ScenariosTests): the iPad's q edit reaches the phone before
    // its p edit; the phone's later p edit is concurrent with the iPad's.
    let file = try Scenario.parse(
      """
      devices iPad phone
      policy field-lww-clock batch=1
      latency 100ms
      autosync off
      push off
      clock iPad skew +10s
      type Note
        body: string = ""
      at 0s    iPad create Note q body="q0"
      at 0s    iPad create Note p body="p0"
      at 1s    sync
      at 2s    offline iPad
      at 3s    iPad set q body="q1"
      at 4s    iPad set p body="p1"
      at 5s    iPad set q body="q2"
      at 6s    online iPad
      at 6s    iPad sync
      at 6.15s phone sync
      at 7s    phone set p body="p-phone"
      at 7.05s phone sync
      settle
      """, source: "inline"
    ).get()
    let result = ScenarioRunner.run(file, recordObservations: true)
    let verdicts = OracleAgreement.verdicts(result)
    #expect(verdicts.map(\.kind) == ["lost-edit"])
    #expect(ReferenceOracle.judge(result.world) == verdicts)
  }

  /// The lessons of references, uniqueness and app versions, under every preset: both oracles
  /// find the same dangling references, duplicates, erased and never-backfilled values.
  @Test(arguments: [
    "settings-singleton", "list-deleted-while-adding", "child-before-parent", "staged-rollout",
    // Sharing: access leaks, refused writes.
    "participant-removed", "read-only-edit-shown-saved", "permission-dropped-offline", "unshared-while-offline",
    "left-share-on-other-device", "read-only-never-updated", "guest-echoes-owner-change", "share-accepted-again",
    "share-after-child-saved",
    "accepted-share-not-fetched",
    // Assets: files deleted, purged, saved without data; records over 1 MB.
    "fat-note-passes-1mb", "asset-file-deleted-early", "staging-purged", "asset-lost-in-merge",
    "asset-changed-in-upload", "upload-cut-by-kill",
  ])
  func bothOraclesAgreeOnTheSchemaLessons(name: String) throws {
    let file = try Scenario.load(name)
    var found = 0
    for policy in OracleAgreement.presets {
      let result = ScenarioRunner.run(file, policy: policy, recordObservations: true)
      let verdicts = OracleAgreement.verdicts(result)
      found += verdicts.count
      #expect(ReferenceOracle.judge(result.world) == verdicts, "\(name) under \(policy)")
    }
    #expect(found > 0)
  }

  /// The account-switch lesson under the engine that keeps local data for the next account
  /// (`account=merge`, no preset) and under the default: both oracles see the same leak, and
  /// none.
  @Test func bothOraclesAgreeOnSharedRecordsAfterAnAccountSwitch() throws {
    let file = try Scenario.load("shared-after-switch")
    for (spec, leaks) in [("field-lww-hlc account=merge", 1), ("field-lww-hlc", 0)] {
      let result = ScenarioRunner.run(file, policy: try PolicySpec.parse(spec).get(), recordObservations: true)
      let verdicts = OracleAgreement.verdicts(result)
      #expect(verdicts.filter { $0.kind == "access-leak" }.count == leaks, "\(spec)")
      #expect(ReferenceOracle.judge(result.world) == verdicts, "\(spec)")
    }
  }

  @Test func aPlantedDisagreementIsReported() throws {
    // The comparison itself can fail: a verdict only one side has is named.
    let a = [OracleAgreement.Verdict(kind: "lost-edit", record: 0, field: 1)]
    #expect(OracleAgreement.multisetDifference(a, []).count == 1)
    #expect(OracleAgreement.multisetDifference(a + a, a).count == 1)
    #expect(OracleAgreement.multisetDifference(a, a).isEmpty)
  }
}
