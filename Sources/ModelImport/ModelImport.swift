/// Reads the user's SwiftData and Core Data models (placeholder until the importer lands).
public enum ModelImporter {}
