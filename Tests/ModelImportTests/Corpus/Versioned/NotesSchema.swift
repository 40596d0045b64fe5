// swift-format-ignore-file
import Foundation
import SwiftData

enum NotesSchemaV1: VersionedSchema {
  static var versionIdentifier = Schema.Version(1, 0, 0)
  static var models: [any PersistentModel.Type] { [Note.self] }

  @Model final class Note {
    var title: String = ""
    var body: String = ""
    var pinned: Bool = false
    var colour: String = "yellow"
    init() {}
  }
}

enum NotesSchemaV2: VersionedSchema {
  static var versionIdentifier = Schema.Version(2, 0, 0)
  static var models: [any PersistentModel.Type] { [Note.self, Folder.self] }

  @Model final class Note {
    var title: String = ""
    var body: String = ""
    var pinned: Int = 0
    var createdAt: Date = Date.now
    @Relationship(inverse: \Folder.notes) var folder: Folder?
    init() {}
  }

  @Model final class Folder {
    var name: String = "Notes"
    @Relationship(deleteRule: .cascade) var notes: [Note]? = []
    init() {}
  }
}

enum NotesMigrationPlan: SchemaMigrationPlan {
  static var schemas: [any VersionedSchema.Type] { [NotesSchemaV1.self, NotesSchemaV2.self] }
  static var stages: [MigrationStage] { [migrateV1toV2] }
  static let migrateV1toV2 = MigrationStage.lightweight(fromVersion: NotesSchemaV1.self, toVersion: NotesSchemaV2.self)
}

typealias Note = NotesSchemaV2.Note
typealias Folder = NotesSchemaV2.Folder
