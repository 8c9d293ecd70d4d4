import Foundation
import StrataLock

/// A model, a coordinator and its stores, and the contexts an app works in (Core Data's
/// `NSPersistentContainer`): a ``viewContext`` for the main actor, background contexts, and background tasks.
///
/// For example:
/// ```swift
/// let container = PersistentContainer(name: "Company", managedObjectModel: model)
/// container.persistentStoreDescriptions = [PersistentStoreDescription(url: directory)]
/// container.loadPersistentStores { description, error in
///     if let error { fatalError("\(error)") }
/// }
/// try await container.performBackgroundTask { context in
///     Employee(context: context).name = "Ada"
///     try context.save()
/// }
/// ```
///
/// ## Topics
/// - ``loadPersistentStores(completionHandler:)``
/// - ``viewContext``
/// - ``newBackgroundContext()``
/// - ``performBackgroundTask(_:)-(@Sendable(ManagedObjectContext)->Void)``
public final class PersistentContainer: Sendable {
    /// The container's name: the default store directory's last component.
    public let name: String
    /// The model of every store and context.
    public let managedObjectModel: ManagedObjectModel
    /// The coordinator the contexts share.
    public let persistentStoreCoordinator: PersistentStoreCoordinator
    private let descriptions: Lock<[PersistentStoreDescription]>
    // Safety: made and read only on the main actor (``viewContext`` is main-actor isolated).
    private nonisolated(unsafe) var mainContext: ManagedObjectContext?

    /// Makes a container; its one description is a Strata store named `name` in ``defaultDirectoryURL()``.
    ///
    /// - Parameters:
    ///   - name: the container's name.
    ///   - managedObjectModel: the model.
    public init(name: String, managedObjectModel: ManagedObjectModel) {
        self.name = name
        self.managedObjectModel = managedObjectModel
        self.persistentStoreCoordinator = PersistentStoreCoordinator(model: managedObjectModel)
        descriptions = Lock([
            PersistentStoreDescription(url: Self.defaultDirectoryURL().appendingPathComponent(name, isDirectory: true))
        ])
    }

    /// Where stores go by default: `$XDG_DATA_HOME`, else `~/.local/share` (Core Data's application-support
    /// directory has no Linux counterpart).
    public static func defaultDirectoryURL() -> URL {
        if let data = ProcessInfo.processInfo.environment["XDG_DATA_HOME"], !data.isEmpty {
            return URL(fileURLWithPath: data, isDirectory: true)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share", isDirectory: true)
    }

    /// The stores ``loadPersistentStores(completionHandler:)`` adds, in order.
    public var persistentStoreDescriptions: [PersistentStoreDescription] {
        get { descriptions.withLock { $0 } }
        set { descriptions.withLock { $0 = newValue } }
    }

    /// Adds a store for each description, in order, calling `completionHandler` once per description with
    /// the error that kept it from loading, if any (Core Data's `loadPersistentStores(completionHandler:)`).
    /// A description whose store is already loaded is skipped.
    ///
    /// - Parameter completionHandler: called on the calling thread, once per description.
    public func loadPersistentStores(completionHandler: (PersistentStoreDescription, (any Error)?) -> Void) {
        for description in persistentStoreDescriptions {
            do {
                try load(description)
                completionHandler(description, nil)
            } catch {
                completionHandler(description, error)
            }
        }
    }

    private func load(_ description: PersistentStoreDescription) throws {
        let history = description.flag(PersistentStoreOptionKey.persistentHistoryTracking)
        switch description.type {
        case .custom(let name):
            throw ObjectGraphError.storage(
                .invalidArgument(
                    "a \(name) store is made by its own module and added with the coordinator's addPersistentStore"))
        case .inMemory:
            persistentStoreCoordinator.addPersistentStore(
                InMemoryStore(model: managedObjectModel, recordsPersistentHistory: history))
        case .strata:
            guard let url = description.url else { throw ObjectGraphError.noStoreURL }
            let path = url.standardizedFileURL.path
            let loaded = persistentStoreCoordinator.persistentStores.contains {
                ($0 as? StrataStore)?.directory == path
            }
            if loaded { return }
            var configuration = description.storeConfiguration
            configuration.recordsPersistentHistory = configuration.recordsPersistentHistory || history
            // The description's flags decide, as Core Data's do; the source models and custom mappings come from
            // the store configuration's migration options.
            configuration.migration.shouldMigrateStoreAutomatically = description.shouldMigrateStoreAutomatically
            configuration.migration.shouldInferMappingModelAutomatically =
                description.shouldInferMappingModelAutomatically
            try persistentStoreCoordinator.addPersistentStore(.strata(directory: path, configuration: configuration))
        }
    }

    /// The context of the main actor (Core Data's `viewContext`, a main-queue context), made on first use.
    /// It does not merge background saves unless you set its
    /// ``ManagedObjectContext/automaticallyMergesChangesFromParent``.
    @MainActor
    public var viewContext: ManagedObjectContext {
        if let mainContext { return mainContext }
        let context = ManagedObjectContext(concurrencyType: .mainQueue, coordinator: persistentStoreCoordinator)
        mainContext = context
        return context
    }

    /// A new private-queue context on the container's coordinator (Core Data's `newBackgroundContext()`).
    public func newBackgroundContext() -> PrivateQueueContext {
        PrivateQueueContext(coordinator: persistentStoreCoordinator)
    }

    /// Runs `block` on a new private-queue context and returns at once (Core Data's
    /// `performBackgroundTask(_:)`).
    ///
    /// - Parameter block: the work; the context is valid only inside it.
    public func performBackgroundTask(_ block: @escaping @Sendable (ManagedObjectContext) -> Void) {
        newBackgroundContext().perform(block)
    }

    /// Runs `block` on a new private-queue context and returns its result (Core Data's async
    /// `performBackgroundTask(_:)`).
    ///
    /// - Parameter block: the work; the context is valid only inside it.
    /// - Returns: what `block` returns.
    /// - Throws: what `block` throws.
    public func performBackgroundTask<T: Sendable>(
        _ block: @escaping @Sendable (ManagedObjectContext) throws -> T
    ) async throws -> T {
        try await newBackgroundContext().perform(block)
    }
}
