import Replica
import Scenarios
@_spi(Kernel) import Simulator

extension AppUnderTest {
  /// Your app type, to run on every device: each device launches its own instance (again after
  /// every kill, from what it left on the device's disk), named in reports as `app TYPE`. The
  /// app's ``SimApp/schema`` is read here: the fuzzer draws its workload from it, and a scenario
  /// on another schema is bound to it.
  ///
  ///     let report = ScenarioRunner.run(try Scenario.load("different-fields"), app: AppUnderTest(NotesApp.self)).report
  public init<App: SimApp>(_ app: App.Type) {
    let declared = App.schema
    var schema: Schema?
    var problem: String?
    switch declared.resolve() {
    case .success(let s): schema = s
    case .failure(let e): problem = e.message
    }
    if problem == nil, let naming = declared.recordNames.problem { problem = naming }
    let statesSchema = schema != nil
    // (`_typeName`, not `String(describing:)`: the same name without the runtime's search for
    // a description conformance: with the sixteen apps built in, ~3 ms of every start.)
    let name = _typeName(App.self, qualified: false)
    self.init(name: name, schema: schema, schemaProblem: problem, reusesNames: declared.recordNames == .reused, sharesRecords: App.sharesRecords) {
      run in
      // One registry per run, shared by its devices: which intent wrote which value.
      let provenance = ProvenanceRegistry()
      provenance.seed = run.seed
      provenance.behaviour = run.behaviour
      let plan = run.plan
      provenance.types = plan.recordTypes
      provenance.appStatesSchema = statesSchema
      let file = plan.file
      let naming = declared.recordNames
      let types = plan.recordTypes
      let appNames = plan.recordNames.enumerated().map { k, id in
        SyncEngineDriver<App>.name(for: id, type: k < types.count ? file.schema.types[Int(types[k])].name : "", naming: naming)
      }
      // (Zones are read only in a scenario that shares, as the world reads them.)
      let shares = !file.shareNames.isEmpty
      let zoneNames = shares ? file.zoneNames : []
      let recordZones: [String?] = shares && !file.recordZones.isEmpty ? plan.recordNames.map { file.recordZones[$0] } : []
      return { d in
        SyncEngineDriver<App>(
          index: d, name: file.devices[d], schema: file.schema, recordNames: plan.recordNames, accountNames: file.accountPlan.names,
          atomicBatches: file.server.atomic, fetchesFirst: file.server.engineFetchesFirst, provenance: provenance, appNames: appNames,
          recordZones: recordZones, zoneNames: zoneNames)
      }
    }
  }
}

extension ScenarioRunner {
  /// Runs `file` with the user's app and its `SyncEngine` on every device, instead of the
  /// engine of a preset; the server behaves as CloudKit does for `CKSyncEngine` (saves
  /// conditional on the change tag; one without a tag of a record the server does not have is a new record). The report names the policy `app TYPE`.
  ///
  /// Values in the scenario must be unique per intent (a `set` writes a value no other intent
  /// writes to that field): the app stores values, not who wrote them, and the oracle finds the
  /// intent from the value.
  ///
  ///     let report = ScenarioRunner.run(try Scenario.load("different-fields"), app: NotesApp.self).report
  public static func run<App: SimApp>(_ file: ScenarioFile, app: App.Type, seed: UInt64? = nil, keepEvents: Bool = false) -> Result {
    run(file, app: AppUnderTest(app), seed: seed, keepEvents: keepEvents)
  }

  /// Runs `file` with the user's app twice, with the same seed, and reports the first step where
  /// the app behaved differently: the `AppUnderTest` form, for an app type.
  ///
  ///     let check = ScenarioRunner.checkDeterminism(try Scenario.load("app-zone-busy"), app: NotesApp.self)
  ///     print(check.text)   // ✓ deterministic: two runs made the same … steps
  public static func checkDeterminism<App: SimApp>(_ file: ScenarioFile, app: App.Type, seed: UInt64? = nil) -> DeterminismCheck {
    checkDeterminism(file, app: AppUnderTest(app), seed: seed)
  }
}
