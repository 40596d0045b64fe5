/// The named scenarios of the repository's `scenarios/` folder, embedded in the library as
/// package resources (`Package.swift`: `.embedInCode("Resources/scenarios")`), so that a scenario
/// can be loaded by name wherever the library or the tool runs. A test keeps this list equal to
/// the folder: add a line here when you add a file there.
enum BuiltInScenarios {
  static let files: [(name: String, bytes: [UInt8])] = [
    ("budget-expires-mid-batch", PackageResources.budget_expires_mid_batch_scenario),
    ("delete-vs-edit", PackageResources.delete_vs_edit_scenario),
    ("different-fields", PackageResources.different_fields_scenario),
    ("fat-note-lww", PackageResources.fat_note_lww_scenario),
    ("killed-with-memory-outbox", PackageResources.killed_with_memory_outbox_scenario),
    ("lost-ack-hard-delete", PackageResources.lost_ack_hard_delete_scenario),
    ("retention-zombie", PackageResources.retention_zombie_scenario),
    ("skewed-clock", PackageResources.skewed_clock_scenario),
    ("three-device-fanout", PackageResources.three_device_fanout_scenario),
    ("token-before-apply", PackageResources.token_before_apply_scenario),
    ("two-device-acceptance", PackageResources.two_device_acceptance_scenario),
    ("unsafe-schema", PackageResources.unsafe_schema_scenario),
  ]
}
