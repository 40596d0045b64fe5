import Replica
import Scenarios
@_spi(Kernel) import Simulator

extension ScenarioRunner {
  /// Runs `file` with the user's app and its `SyncEngine` on every device, instead of the
  /// engine of a preset; the server behaves as CloudKit does for `CKSyncEngine` (saves
  /// conditional on the change tag, tombstones). The report names the policy `app TYPE`.
  ///
  /// Values in the scenario must be unique per intent (a `set` writes a value no other intent
  /// writes to that field): the app stores values, not who wrote them, and the oracle finds the
  /// intent from the value.
  ///
  ///     let report = ScenarioRunner.run(try Scenario.load("different-fields"), app: NotesApp.self).report
  public static func run<App: SimApp>(_ file: ScenarioFile, app: App.Type, seed: UInt64? = nil, keepEvents: Bool = false) -> Result {
    let plan = prepare(file)
    let provenance = ProvenanceRegistry()
    let spec = try! PolicySpec.parse("sync-engine-merge").get()
    return _run(
      plan, seed: seed, spec: spec, custom: nil, keepEvents: keepEvents,
      app: (
        String(describing: App.self),
        { d in
          SyncEngineDriver<App>(index: d, name: file.devices[d], schema: file.schema, recordNames: plan.recordNames, provenance: provenance)
        }
      ))
  }
}
