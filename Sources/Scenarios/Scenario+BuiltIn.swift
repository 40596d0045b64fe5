/// The named scenarios of the repository's `scenarios/` folder, embedded in the library as
/// package resources (`Package.swift`: `.embedInCode("Resources/scenarios")`), so that a scenario
/// can be loaded by name wherever the library or the tool runs. A test keeps this list equal to
/// the folder: add a line here when you add a file there.
enum BuiltInScenarios {
  static let files: [(name: String, bytes: [UInt8])] = [
    ("account-switch-offline", PackageResources.account_switch_offline_scenario),
    ("app-concurrent-appends", PackageResources.app_concurrent_appends_scenario),
    ("app-conflicting-save", PackageResources.app_conflicting_save_scenario),
    ("app-delete-after-edit", PackageResources.app_delete_after_edit_scenario),
    ("app-edit-under-fetch", PackageResources.app_edit_under_fetch_scenario),
    ("app-edit-while-sending", PackageResources.app_edit_while_sending_scenario),
    ("app-killed-before-sync", PackageResources.app_killed_before_sync_scenario),
    ("app-signed-out-offline", PackageResources.app_signed_out_offline_scenario),
    ("app-zone-busy", PackageResources.app_zone_busy_scenario),
    ("app-zone-deleted", PackageResources.app_zone_deleted_scenario),
    ("budget-expires-mid-batch", PackageResources.budget_expires_mid_batch_scenario),
    ("child-before-parent", PackageResources.child_before_parent_scenario),
    ("delete-vs-edit", PackageResources.delete_vs_edit_scenario),
    ("different-fields", PackageResources.different_fields_scenario),
    ("encrypted-data-reset", PackageResources.encrypted_data_reset_scenario),
    ("fat-note-lww", PackageResources.fat_note_lww_scenario),
    ("icloud-storage-full", PackageResources.icloud_storage_full_scenario),
    ("killed-with-memory-outbox", PackageResources.killed_with_memory_outbox_scenario),
    ("list-deleted-while-adding", PackageResources.list_deleted_while_adding_scenario),
    ("lost-ack-hard-delete", PackageResources.lost_ack_hard_delete_scenario),
    ("one-bad-record-in-batch", PackageResources.one_bad_record_in_batch_scenario),
    ("oversized-batch", PackageResources.oversized_batch_scenario),
    ("rate-limit-storm", PackageResources.rate_limit_storm_scenario),
    ("refiled-then-folder-deleted", PackageResources.refiled_then_folder_deleted_scenario),
    ("retention-zombie", PackageResources.retention_zombie_scenario),
    ("settings-deduplicated", PackageResources.settings_deduplicated_scenario),
    ("settings-singleton", PackageResources.settings_singleton_scenario),
    ("skewed-clock", PackageResources.skewed_clock_scenario),
    ("staged-rollout", PackageResources.staged_rollout_scenario),
    ("three-device-fanout", PackageResources.three_device_fanout_scenario),
    ("token-before-apply", PackageResources.token_before_apply_scenario),
    ("transient-as-permanent", PackageResources.transient_as_permanent_scenario),
    ("two-device-acceptance", PackageResources.two_device_acceptance_scenario),
    ("unsafe-schema", PackageResources.unsafe_schema_scenario),
    ("zone-purged-in-settings", PackageResources.zone_purged_in_settings_scenario),
  ]
}
