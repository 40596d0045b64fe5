// swift-format-ignore-file
import Foundation
import SwiftData

// A model written for CloudKit from the start: every attribute optional or defaulted, every
// relationship optional with an inverse, no unique constraints.

@Model
final class Recipe {
  var title: String = ""
  var servings: Int = 2
  var vegetarian: Bool = false
  var createdAt: Date = Date.now
  var summary: String?
  @Relationship(deleteRule: .cascade, inverse: \Ingredient.recipe)
  var ingredients: [Ingredient]? = []
  @Relationship(deleteRule: .nullify, inverse: \Cookbook.recipes)
  var cookbook: Cookbook?

  init() {}
}

@Model
final class Ingredient {
  var name: String = ""
  var quantity: Int = 1
  var recipe: Recipe?

  init() {}
}

@Model
final class Cookbook {
  var title: String = "My Cookbook"
  @Relationship(deleteRule: .nullify) var recipes: [Recipe]? = []

  init() {}
}
