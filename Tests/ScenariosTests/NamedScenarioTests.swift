import Replica
import Scenarios
@_spi(Kernel) import Simulator
import Testing

/// The named scenarios ship with the tool; each states a lesson and must pass its own
/// expectations, and the oracle is tested in both directions on them.
@Suite struct NamedScenarioTests {
  static let names = [
    "two-device-acceptance", "fat-note-lww", "different-fields", "skewed-clock", "lost-ack-hard-delete",
    "retention-zombie", "budget-expires-mid-batch", "killed-with-memory-outbox", "token-before-apply",
    "unsafe-schema", "delete-vs-edit", "three-device-fanout", "icloud-storage-full", "transient-as-permanent",
    "one-bad-record-in-batch", "oversized-batch", "rate-limit-storm", "zone-purged-in-settings", "encrypted-data-reset", "account-switch-offline",
    "settings-singleton", "list-deleted-while-adding", "child-before-parent", "staged-rollout", "settings-deduplicated",
    "refiled-then-folder-deleted", "recreated-record",
    // Sharing: access ends, permissions drop.
    "participant-removed", "read-only-edit-shown-saved", "permission-dropped-offline", "unshared-while-offline",
    "left-share-on-other-device", "shared-after-switch", "read-only-never-updated", "guest-echoes-owner-change", "share-accepted-again",
    "share-after-child-saved",
    "accepted-share-not-fetched",
    // Assets and the per-record limit.
    "fat-note-passes-1mb", "fat-note-as-asset", "asset-file-deleted-early", "staging-purged", "asset-lost-in-merge",
    "asset-changed-in-upload", "upload-cut-by-kill",
    // Lessons for an app written on SimSyncEngine: the safe design passes them; each catches a
    // planted-bug app (Tests/SimSyncEngineTests/AppScenarioTests.swift).
    "app-edit-under-fetch", "app-killed-before-sync", "app-conflicting-save", "app-zone-busy", "app-edit-while-sending",
    "app-delete-after-edit", "app-concurrent-appends", "app-signed-out-offline", "app-zone-deleted",
    "app-reinserted-note", "app-list-deleted", "app-delete-in-failed-batch", "app-switched-account",
  ]

  @Test func everyNamedScenarioShipsAndHasAnAboutLine() throws {
    #expect(Scenario.builtInNames == Self.names.sorted())
    for name in Self.names {
      let file = try Scenario.load(name)
      #expect(!(file.about ?? "").isEmpty, "\(name) has no about line")
    }
  }

  @Test(arguments: names)
  func passesItsOwnExpectations(name: String) throws {
    let report = ScenarioRunner.run(try Scenario.load(name)).report
    #expect(report.passed, "\(report.text)")
    #expect(!report.expectations.isEmpty)
  }

  /// Planted bug, the scenario that must catch it, the kind it must report, and the fixed variant.
  static let plantedBugs: [(preset: String, scenario: String, kind: AnomalyKind, fixed: String)] = [
    ("hard-delete", "lost-ack-hard-delete", .resurrection, "field-lww-hlc"),
    ("mark-first-unit", "budget-expires-mid-batch", .strandedRecord, "field-lww-hlc"),
    ("memory-outbox", "killed-with-memory-outbox", .strandedRecord, "field-lww-hlc"),
    ("token-before-apply", "token-before-apply", .droppedEvent, "field-lww-hlc"),
    ("naive-refetch", "retention-zombie", .resurrection, "field-lww-hlc"),
    // The CloudKit surface: every lesson fails under its planted bug and passes under the
    // correct reactions (the field-lww-hlc defaults).
    ("drops-transient", "icloud-storage-full", .strandedRecord, "field-lww-hlc"),
    ("drops-transient", "transient-as-permanent", .lostEdit, "field-lww-hlc"),
    ("drops-transient", "one-bad-record-in-batch", .strandedRecord, "field-lww-hlc"),
    ("no-split", "oversized-batch", .stalledSync, "field-lww-hlc"),
    ("ignores-retry-after", "rate-limit-storm", .stalledSync, "field-lww-hlc"),
    ("reuploads-after-purge", "zone-purged-in-settings", .resurrection, "field-lww-hlc"),
    ("wipes-after-reset", "encrypted-data-reset", .lostEdit, "field-lww-hlc"),
    ("wipes-on-signout", "account-switch-offline", .lostEdit, "field-lww-hlc"),
    // Real schemas: uniqueness, references, app versions.
    ("random-record-names", "settings-singleton", .logicalDuplicate, "field-lww-hlc"),
    ("dedupes-after-fetch", "settings-deduplicated", .lostEdit, "field-lww-hlc"),
    ("local-delete-rules", "list-deleted-while-adding", .danglingReference, "field-lww-hlc"),
    ("deletions-first", "refiled-then-folder-deleted", .danglingReference, "field-lww-hlc"),
    ("drops-orphans", "child-before-parent", .divergence, "field-lww-hlc batch=1"),
    ("drops-unknown-fields", "staged-rollout", .lostEdit, "field-lww-hlc"),
    ("drops-unknown-fields", "staged-rollout", .divergence, "field-lww-hlc"),
    // Sharing.
    ("keeps-revoked-shares", "participant-removed", .accessLeak, "field-lww-hlc"),
    ("keeps-revoked-shares", "unshared-while-offline", .accessLeak, "field-lww-hlc"),
    ("keeps-revoked-shares", "left-share-on-other-device", .accessLeak, "field-lww-hlc"),
    ("ignores-permission-failure", "read-only-edit-shown-saved", .lostEdit, "field-lww-hlc"),
    ("ignores-permission-failure", "permission-dropped-offline", .lostEdit, "field-lww-hlc"),
    ("blocks-read-only-updates", "read-only-never-updated", .divergence, "field-lww-hlc"),
    ("echoes-shared-changes", "guest-echoes-owner-change", .staleOverwrite, "field-lww-arrival"),
    ("skips-own-records", "share-accepted-again", .divergence, "field-lww-hlc"),
    ("shares-stale-root", "share-after-child-saved", .stalledSync, "field-lww-hlc"),
    ("fetches-shares-at-launch", "accepted-share-not-fetched", .divergence, "field-lww-hlc"),
    // Assets.
    ("deletes-file-early", "asset-file-deleted-early", .strandedRecord, "field-lww-hlc"),
    ("keeps-staging-url", "staging-purged", .missingAsset, "field-lww-hlc"),
    ("merges-server-assets", "asset-lost-in-merge", .missingAsset, "sync-engine-merge"),
    ("drops-transient", "asset-changed-in-upload", .strandedRecord, "field-lww-hlc"),
    ("mark-first-unit", "upload-cut-by-kill", .strandedRecord, "field-lww-hlc"),
  ]

  @Test func everyPlantedBugPresetHasAScenarioHere() {
    let planted = PolicyPreset.all.filter(\.plantedBug).map(\.name)
    #expect(Set(Self.plantedBugs.map(\.preset)) == Set(planted))
  }

  @Test(arguments: plantedBugs.indices)
  func aPlantedBugIsCaughtOnItsScenario(index: Int) throws {
    let bug = Self.plantedBugs[index]
    let file = try Scenario.load(bug.scenario)
    let report = ScenarioRunner.run(file, policy: try PolicySpec.parse(bug.preset).get()).report
    #expect(report.counts[bug.kind] >= 1, "\(bug.preset) on \(bug.scenario):\n\(report.text)")
  }

  @Test(arguments: plantedBugs.indices)
  func theFixedVariantOfAPlantedBugLosesNothing(index: Int) throws {
    let bug = Self.plantedBugs[index]
    let file = try Scenario.load(bug.scenario)
    let report = ScenarioRunner.run(file, policy: try PolicySpec.parse(bug.fixed).get()).report
    #expect(report.violations.isEmpty, "\(bug.fixed) on \(bug.scenario):\n\(report.text)")
    #expect(report.converged)
  }

  /// The stacks `policies.md` says lose data are caught on their lesson; the safe designs are not.
  @Test(arguments: [
    ("cloudkit-default", "different-fields", AnomalyKind.lostEdit),
    ("cloudkit-default", "fat-note-lww", .lostEdit),
    ("cloudkit-default", "retention-zombie", .resurrection),
    ("record-lww-clock", "skewed-clock", .staleOverwrite),
    ("field-lww-clock", "skewed-clock", .staleOverwrite),
    ("field-lww-hlc", "fat-note-lww", .lostEdit),
    ("sync-engine-merge", "fat-note-lww", .lostEdit),
  ])
  func knownLossesAreCaught(policy: String, scenario: String, kind: AnomalyKind) throws {
    let report = ScenarioRunner.run(try Scenario.load(scenario), policy: try PolicySpec.parse(policy).get()).report
    #expect(report.counts[kind] >= 1, "\(report.text)")
  }

  @Test(arguments: ["fat-note-lww", "different-fields", "skewed-clock", "two-device-acceptance", "three-device-fanout", "delete-vs-edit"])
  func theCRDTPolicyLosesNothingTheOracleCounts(scenario: String) throws {
    let report = ScenarioRunner.run(try Scenario.load(scenario), policy: try PolicySpec.parse("crdt").get()).report
    #expect(report.violations.isEmpty, "\(report.text)")
  }

  @Test func theSameSeedGivesTheSameTraceHashAndOtherSeedsDiffer() throws {
    let file = try Scenario.load("three-device-fanout")
    let a = ScenarioRunner.run(file, seed: 7).report
    let b = ScenarioRunner.run(file, seed: 7).report
    let c = ScenarioRunner.run(file, seed: 8).report
    #expect(a.traceHash == b.traceHash)
    #expect(a == b)
    #expect(a.traceHash != c.traceHash)
  }
}

@Suite struct TraceModeTests {
  @Test(arguments: ["fat-note-lww", "three-device-fanout", "lost-ack-hard-delete"])
  func keepingTheFullTraceDoesNotChangeTheHash(name: String) throws {
    let file = try Scenario.load(name)
    let quick = ScenarioRunner.run(file)
    let full = ScenarioRunner.run(file, keepEvents: true)
    #expect(quick.report.traceHash == full.report.traceHash)
    #expect(quick.world.events.isEmpty)
    #expect(
      full.world.events.contains {
        if case .decided = $0.what { return true }
        return false
      })
  }
}
