import Replica
import Testing

@testable import Scenarios

/// Runs the fuzzer found on the way, each failing on the code before its fix (checked by running
/// the same seeds with the build before it).
@Suite struct CloudKitRegressionTests {
  func fuzzSeed(_ seed: UInt64, _ policy: String) throws -> RunReport {
    Fuzzer.run(seed: seed, shape: WorkloadShape(), policy: try PolicySpec.parse(policy).get()).report
  }

  /// crdt, fuzz seed 9748 (before this change, and before the CloudKit surface too): an offline
  /// device's edit revives a note deleted meanwhile; the revival took the offline copy whole, so
  /// a concurrent title (the tombstone had it) went back to the default. Now the write is saved
  /// over the tombstone's fields.
  @Test func aRevivingWriteIsSavedOverTheTombstonesFields() throws {
    let shrunk = try parsed(
      """
      devices iPad phone mac
      policy crdt
      seed 9748
      latency 49ms..1.102s
      clock phone skew -5s
      type Note
        title: string = "" mutable
        body: text = ""
      at 26.314s iPad create Note n12
      at 30.871s offline iPad
      at 48.333s mac set n12 title="t21"
      at 50.087s phone set n12 title="t26"
      at 51.533s iPad append n12.body " +29"
      at 66.304s mac delete n12
      """)
    for r in [ScenarioRunner.run(shrunk).report, try fuzzSeed(9748, "crdt")] {
      #expect(r.violations.isEmpty, "\(r.text)")
    }
  }

  /// crdt, fuzz seed 46400: a purge in the iPad's Settings is the user's delete, but the app on
  /// the iPad had not applied it; a note that became visible there afterwards (from a fetch
  /// answered before the purge) was reported as a transient resurrection.
  @Test func aPurgeInSettingsIsNotAppliedByTheApp() throws {
    let r = try fuzzSeed(46400, "crdt")
    #expect(r.violations.isEmpty, "\(r.text)")
  }

  /// sync-engine-merge, fuzz seeds 36142 and 8046: a save waiting out a CloudKit error, then a
  /// newer version fetched meanwhile; under if-unchanged the next save overwrote it with the
  /// device's stale fields. Now what the fetch brings is merged in.
  @Test(arguments: [36142, 8046] as [UInt64])
  func aSaveWaitingOutAnErrorMergesWhatAFetchBrings(seed: UInt64) throws {
    let r = try fuzzSeed(seed, "sync-engine-merge")
    #expect(r.violations.isEmpty, "\(r.text)")
  }
}
