import Foundation
import Strata
import StrataStorage
import StrataWorkload

/// The row cache's counters, as ``PersistentStoreCoordinator/rowCacheStatistics`` gives them.
typealias RowCacheStatistics = (entries: Int, cachedRows: Int, hits: Int, misses: Int)

/// One run of `strata demo`: the steps of ``DemoCommand`` and what they must find.
struct DemoRun {
    let directory: String
    let employeeCount: Int
    let durability: StoreConfiguration.Durability
    let durabilityName: String
    let workload: CompanyWorkload
    let report = DemoReport()

    /// The number of random point lookups after the reopen.
    static let lookupCount = 10_000
    /// The seed of the generator choosing which employees the lookups read.
    static let lookupSeed: UInt64 = 1
    /// How many of the lookups also turn their object's ID into a URI and back.
    static let uriRoundTrips = 16
    /// Employees 0, 1,000, 2,000, ... get a photo: a 64 KiB chunk of the workload's compressible blob pool, far
    /// above the engine's blob threshold, so each goes to a blob segment.
    static let photoInterval = 1_000

    init(directory: String, employeeCount: Int, durability: StoreConfiguration.Durability, durabilityName: String) {
        self.directory = directory
        self.employeeCount = employeeCount
        self.durability = durability
        self.durabilityName = durabilityName
        self.workload = CompanyWorkload(employeeCount: employeeCount)
    }

    private var objectCount: Int { workload.departments.count + employeeCount }
    private var photoCount: Int { (employeeCount + Self.photoInterval - 1) / Self.photoInterval }

    func run() throws {
        print(
            "strata demo: \(workload.departments.count) departments + \(DemoReport.grouped(employeeCount)) employees "
                + "(\(DemoReport.grouped(photoCount)) with a 64 KiB photo), durability \(durabilityName)"
        )
        print("store: \(directory)")
        print("machine: \(DemoReport.machineDescription)")
        if try removePreviousStore() { print("(removed the previous demo store)") }

        let model = try CompanyModel.make()
        CompanyModel.registerClasses()
        // A smaller pool is a prefix of the full one: photo k is chunk k of the full pool whatever N is.
        let photos = BlobPool(.compressible, chunkCount: max(1, min(photoCount, BlobPool.defaultChunkCount)))
        report.printHeader()
        let saved = try load(model: model, photos: photos)
        try reopenAndVerify(model: model, saved: saved, photos: photos)
        print("all checks passed")
    }

    private func configuration(createIfMissing: Bool) -> StrataStoreConfiguration {
        StrataStoreConfiguration(storage: StoreConfiguration(createIfMissing: createIfMissing, durability: durability))
    }

    // MARK: - Fresh store

    /// Removes the store in `directory` if the directory holds nothing but a Strata store's files (FORMAT.md
    /// §1); refuses anything else, so that a mistyped path never deletes unrelated files. Only the store's
    /// files are removed (``Store/destroy(at:fileSystem:)``), each by its name in `directory`; the directory
    /// stays.
    ///
    /// - Returns: Whether something was removed.
    /// - Throws: ``DemoFailure`` (with ``DemoFailure/refusal`` set) for a directory the demo refuses.
    private func removePreviousStore() throws -> Bool {
        let files = FileManager.default
        var isDirectory: ObjCBool = false
        guard files.fileExists(atPath: directory, isDirectory: &isDirectory) else { return false }
        guard isDirectory.boolValue else {
            throw DemoFailure(
                "\(directory) exists and is not a directory; choose another store directory", refusal: true)
        }
        let entries = try files.contentsOfDirectory(atPath: directory)
        let strangers = entries.filter { !Store.isStoreFileName($0) }.sorted()
        guard strangers.isEmpty else {
            let shown = strangers.prefix(3).joined(separator: ", ") + (strangers.count > 3 ? ", ..." : "")
            throw DemoFailure(
                "\(directory) holds files that are not part of a Strata store (\(shown)); the demo removes only a "
                    + "previous store: choose another directory or remove them yourself",
                refusal: true)
        }
        guard entries.isEmpty || Store.exists(at: directory) else {
            throw DemoFailure(
                "\(directory) holds store files but no page file (\(entries.joined(separator: ", "))): not removing "
                    + "what may be the rest of a damaged store; choose another directory or remove them yourself",
                refusal: true)
        }
        try Store.destroy(at: directory)
        return !entries.isEmpty
    }

    // MARK: - First session: insert and save

    /// Where the save put each object, and what the generator says the store holds.
    struct SavedCompany {
        var storeIdentifier: UUID
        /// The row ID of each department, by its index in the workload.
        var departmentRows: [UInt64]
        /// The row ID of each employee, by its index in the workload.
        var employeeRows: [UInt64]
        var expected: DemoExpectations
    }

    /// Creates the store, inserts the company through a context, saves once, checks the IDs and closes.
    private func load(model: ManagedObjectModel, photos: BlobPool) throws -> SavedCompany {
        let coordinator = PersistentStoreCoordinator(model: model)
        let store = try report.measure("create store") {
            try coordinator.addPersistentStore(
                .strata(directory: directory, configuration: configuration(createIfMissing: true)))
        }
        let context = ManagedObjectContext(coordinator: coordinator)
        // An import needs no undo, and a context has none by default: it does not keep every object alive.
        var expected = DemoExpectations(
            employeeCount: employeeCount, lookupCount: Self.lookupCount, lookupSeed: Self.lookupSeed)

        var departments = report.measure("insert departments", count: workload.departments.count) {
            insertDepartments(into: context)
        }
        var employees = report.measure("insert employees", count: employeeCount) {
            insertEmployees(into: context, departments: departments, photos: photos, expected: &expected)
        }
        let inserted = context.insertedObjects.count
        try check(inserted == objectCount, "\(inserted) objects inserted, expected \(objectCount)")
        try report.measure("save (1 transaction)", count: objectCount) { try context.save() }
        let saved = try report.measure("check permanent IDs", count: objectCount) {
            try checkPermanentIDs(departments: departments, employees: employees, store: store, context: context)
        }
        try report.measure("release objects", count: objectCount) {
            // Each employee and its department hold each other (Core Data's reference cycle): turning the
            // objects into faults breaks the cycles, then dropping the arrays frees them.
            try context.refreshAllObjects()
            departments = []
            employees = []
            try check(context.registeredObjects.isEmpty, "objects still registered after their release")
        }
        // Closing checkpoints: this is where the save's pages reach the page file.
        try report.measure("close (checkpoints)") { try coordinator.removePersistentStore(store) }
        return SavedCompany(
            storeIdentifier: store.identifier, departmentRows: saved.departments, employeeRows: saved.employees,
            expected: expected)
    }

    private func insertDepartments(into context: ManagedObjectContext) -> [Department] {
        workload.departments.map { row in
            let department = Department(context: context)
            department.name = row.name
            department.budget = row.budget
            return department
        }
    }

    private func insertEmployees(
        into context: ManagedObjectContext, departments: [Department], photos: BlobPool,
        expected: inout DemoExpectations
    ) -> [Employee] {
        let wanted = Set(expected.lookupIndexes)
        // Core Data's designated initializer: `Employee(context:)` would look the entity up by class name for
        // every object, about a tenth of this loop.
        let entity = context.coordinator.model.entitiesByName["Employee"]!
        var employees: [Employee] = []
        employees.reserveCapacity(employeeCount)
        for (index, row) in workload.employees.enumerated() {
            let employee = Employee(entity: entity, insertInto: context)
            employee.name = row.name
            employee.salary = row.salary
            employee.hired = Date(timeIntervalSince1970: row.hired)
            // The inverse follows: the department's `employees` gains the employee.
            employee.department = departments[row.department - 1]
            let hasPhoto = index % Self.photoInterval == 0
            if hasPhoto { employee.photo = Data(photos.chunk(index / Self.photoInterval)) }
            employees.append(employee)
            expected.record(row, at: index, wanted: wanted, hasPhoto: hasPhoto)
        }
        return employees
    }

    /// Every object has a permanent ID in `store`, no unsaved change, and a row of its own.
    private func checkPermanentIDs(
        departments: [Department], employees: [Employee], store: any PersistentStore, context: ManagedObjectContext
    ) throws -> (departments: [UInt64], employees: [UInt64]) {
        try check(!context.hasChanges, "the context has changes after the save")
        func rows(_ objects: [ManagedObject], _ entity: String) throws -> [UInt64] {
            var rows: [UInt64] = []
            rows.reserveCapacity(objects.count)
            for object in objects {
                let id = object.objectID
                guard !id.isTemporaryID, id.storeIdentifier == store.identifier, let row = id.rowID else {
                    throw DemoFailure("check failed: \(id) is not a permanent ID of the store after the save")
                }
                try check(!object.hasChanges && !object.isFault, "\(id) has changes or is a fault after the save")
                rows.append(row)
            }
            let distinct = Set(rows).count
            try check(distinct == rows.count, "\(rows.count - distinct) \(entity) rows given to two objects")
            return rows
        }
        return (try rows(departments, "Department"), try rows(employees, "Employee"))
    }

    // MARK: - Second session: reopen, fault, look up

    /// Opens a new coordinator on the store and checks everything the save wrote.
    private func reopenAndVerify(model: ManagedObjectModel, saved: SavedCompany, photos: BlobPool) throws {
        let coordinator = PersistentStoreCoordinator(model: model)
        let added = try report.measure("reopen (new coordinator)") {
            try coordinator.addPersistentStore(
                .strata(directory: directory, configuration: configuration(createIfMissing: false)))
        }
        guard let store = added as? StrataStore else { throw DemoFailure("the reopened store is not a StrataStore") }
        try check(store.identifier == saved.storeIdentifier, "the reopened store has another identifier")

        let whileFetched = try verifyAllObjects(coordinator: coordinator, saved: saved, photos: photos)
        try lookUpRandomEmployees(coordinator: coordinator, saved: saved)
        try report.measure("engine scan (entity.Employee)", count: employeeCount, unit: "rows") {
            try scanEmployeeTable(of: store)
        }

        let blobs = try store.engine.blobSegmentStatistics()
        let liveBlobs = blobs.reduce(0) { $0 + $1.liveBlobs }
        try check(liveBlobs == photoCount, "\(liveBlobs) blobs in the blob segments, expected \(photoCount) photos")
        try walkAndCascade(coordinator: coordinator, saved: saved)
        let statistics = store.engine.statistics
        let atClose = coordinator.rowCacheStatistics
        try report.measure("close") { try coordinator.removePersistentStore(store) }

        report.printFiles(in: directory)
        report.printRowCache([
            (when: "with every employee fetched", statistics: whileFetched),
            (when: "at close (after the lookups)", statistics: atClose),
        ])
        report.printBlobs(blobs)
        report.printEngine(recovery: store.engine.recoveryReport, statistics: statistics)
    }

    /// Fetches every employee as a fault, fires the faults, and checks them against the generator; then the
    /// photos and the departments.
    ///
    /// - Returns: The row cache's counters while the employees were registered.
    private func verifyAllObjects(
        coordinator: PersistentStoreCoordinator, saved: SavedCompany, photos: BlobPool
    ) throws -> RowCacheStatistics {
        let context = ManagedObjectContext(coordinator: coordinator)
        let expected = saved.expected
        let employees = try report.measure("fetch employees (faults)", count: employeeCount) {
            try context.fetch(FetchRequest<Employee>(entityName: "Employee"))
        }
        try check(employees.count == employeeCount, "fetched \(employees.count) employees, expected \(employeeCount)")
        try check(employees.allSatisfy(\.isFault), "a fetched employee is not a fault")

        try report.measure("fire faults (name, salary)", count: employeeCount) {
            var salarySum: Int64 = 0
            var fingerprint: UInt64 = 0
            var photoCount = 0
            for employee in employees {
                let salary = employee.salary
                salarySum &+= salary
                fingerprint &+= DemoExpectations.fingerprint(name: employee.name, salary: salary)
                if employee.photo != nil { photoCount += 1 }
            }
            try check(!employees.contains(where: \.isFault), "an employee is still a fault after its reads")
            try check(salarySum == expected.salarySum, "salary sum \(salarySum), expected \(expected.salarySum)")
            try check(fingerprint == expected.fingerprint, "the names and salaries differ from the generator's")
            try check(
                photoCount == expected.photoIndexes.count,
                "\(photoCount) employees have a photo, expected \(expected.photoIndexes.count)")
        }
        // The context holds its objects weakly: the fetched employees stay registered while `employees` lives.
        return try withExtendedLifetime(employees) {
            let statistics = coordinator.rowCacheStatistics
            try checkPhotosAndDepartments(context: context, saved: saved, photos: photos)
            return statistics
        }
    }

    /// Checks the photos of the registered employees, then fetches the departments.
    private func checkPhotosAndDepartments(
        context: ManagedObjectContext, saved: SavedCompany, photos: BlobPool
    ) throws {
        let coordinator = context.coordinator
        let expected = saved.expected
        try report.measure("photos (external storage)", count: expected.photoIndexes.count) {
            for (photo, index) in expected.photoIndexes.enumerated() {
                let id = try objectID(of: "Employee", row: saved.employeeRows[index], saved: saved, coordinator)
                guard let employee = context.registeredObject(for: id) as? Employee else {
                    throw DemoFailure("check failed: employee \(index) (\(id)) is not registered after the fetch")
                }
                try check(employee.photo == Data(photos.chunk(photo)), "the photo of employee \(index) differs")
            }
        }

        try report.measure("fetch + check departments", count: workload.departments.count) {
            let departments = try context.fetch(FetchRequest<Department>(entityName: "Department"))
            try check(departments.count == workload.departments.count, "fetched \(departments.count) departments")
            let fetched = Dictionary(uniqueKeysWithValues: departments.map { ($0.objectID, $0) })
            for (index, row) in workload.departments.enumerated() {
                let id = try objectID(of: "Department", row: saved.departmentRows[index], saved: saved, coordinator)
                let department = try context.existingObject(with: id) as? Department
                // Uniquing: the ID names the object the fetch registered, not a copy.
                try check(department != nil && department === fetched[id], "department \(index) is not the fetched one")
                try check(
                    department?.name == row.name && department?.budget == row.budget,
                    "department \(index) differs from the generator's")
            }
        }
    }

    /// Random employees, in a new context, by object IDs rebuilt from the row IDs the save gave them: each
    /// lookup makes a fault and fires it from the store.
    private func lookUpRandomEmployees(coordinator: PersistentStoreCoordinator, saved: SavedCompany) throws {
        let expected = saved.expected
        let ids = try report.measure("object IDs from URIs", count: expected.lookupIndexes.count) {
            try expected.lookupIndexes.map { index in
                try objectID(of: "Employee", row: saved.employeeRows[index], saved: saved, coordinator)
            }
        }
        let context = ManagedObjectContext(coordinator: coordinator)
        try report.measure("point lookups (new context)", count: ids.count) {
            for (lookup, (index, id)) in zip(expected.lookupIndexes, ids).enumerated() {
                guard let employee = context.object(with: id) as? Employee, let row = expected.lookedUp[index] else {
                    throw DemoFailure("check failed: employee \(index) (\(id)) is not an Employee")
                }
                try check(
                    employee.name == row.name && employee.salary == row.salary
                        && employee.hired == Date(timeIntervalSince1970: row.hired)
                        && employee.department?.objectID.rowID == saved.departmentRows[row.department - 1],
                    "employee \(index) (\(id)) differs from the generator's")
                if lookup < Self.uriRoundTrips {
                    let uri = employee.objectID.uriRepresentation()
                    let again = try coordinator.managedObjectID(forURIRepresentation: uri)
                    try check(again == id && context.object(with: again) === employee, "\(id) did not survive \(uri)")
                }
            }
        }
        // A row that was never saved: object(with:) makes a fault, which existingObject(with:) refuses.
        let missing = try objectID(of: "Employee", row: UInt64(employeeCount) + 1_000_000, saved: saved, coordinator)
        do {
            _ = try context.existingObject(with: missing)
            throw DemoFailure("check failed: existingObject(with:) found \(missing), which was never saved")
        } catch ObjectGraphError.objectInaccessible {}
    }

    /// Lists every department's employees through the to-many relationship (an index range per department, no
    /// employee row read), then deletes the last department: its delete rule cascades to its employees.
    private func walkAndCascade(coordinator: PersistentStoreCoordinator, saved: SavedCompany) throws {
        var perDepartment = [Int](repeating: 0, count: workload.departments.count)
        for row in workload.employees { perDepartment[row.department - 1] += 1 }
        let context = ManagedObjectContext(coordinator: coordinator)
        // No undo manager (the default): its actions would keep the deleted objects alive.
        let departments = try saved.departmentRows.map { row in
            try objectID(of: "Department", row: row, saved: saved, coordinator)
        }
        let reads = try storeRowReads(coordinator)
        try report.measure("to-many employees (faults)", count: employeeCount) {
            for (index, id) in departments.enumerated() {
                guard let department = context.object(with: id) as? Department else {
                    throw DemoFailure("check failed: \(id) is not a Department")
                }
                let employees = department.employees
                try check(
                    employees.count == perDepartment[index] && employees.allSatisfy(\.isFault),
                    "department \(index) lists \(employees.count) employees, expected \(perDepartment[index]) faults")
                try context.refresh(department, mergeChanges: false)
            }
        }
        let employeeReads = try storeRowReads(coordinator) - reads - departments.count
        try check(employeeReads == 0, "listing the employees read \(employeeReads) employee rows")

        let victim = workload.departments.count - 1
        try report.measure("cascade delete 1 department", count: 1 + perDepartment[victim]) {
            context.delete(context.object(with: departments[victim]))
            try context.processPendingChanges()  // the end of the event: the cascade runs
            try check(
                context.deletedObjects.count == 1 + perDepartment[victim],
                "deleting a department deleted \(context.deletedObjects.count) objects")
            try context.save()
        }
        let after = ManagedObjectContext(coordinator: coordinator)
        let remaining = try after.count(for: FetchRequest<Employee>(entityName: "Employee"))
        try check(
            remaining == employeeCount - perDepartment[victim],
            "\(remaining) employees after the cascade, expected \(employeeCount - perDepartment[victim])")
    }

    private func storeRowReads(_ coordinator: PersistentStoreCoordinator) throws -> Int {
        guard let store = coordinator.persistentStores.first else { throw DemoFailure("no store") }
        return store.rowReads
    }

    /// Counts the employee rows with the engine alone, under the object graph: the table of the `Employee`
    /// hierarchy is `entity.Employee` (see ``StrataStore``).
    private func scanEmployeeTable(of store: StrataStore) throws {
        let snapshot = store.engine.snapshot()
        guard let table = snapshot.table(named: "entity.Employee") else {
            throw DemoFailure("check failed: the engine has no table entity.Employee")
        }
        var rows = 0
        try snapshot.forEachRow(in: table) { _, _ in
            rows += 1
            return true
        }
        try check(rows == employeeCount, "the engine scan found \(rows) employee rows")
    }

    /// The ID of the object of `entity` at `row` of the saved store, from its URI form
    /// `x-strata://<store UUID>/<entity>/p<row>` (``ManagedObjectID/uriRepresentation()``).
    private func objectID(
        of entity: String, row: UInt64, saved: SavedCompany, _ coordinator: PersistentStoreCoordinator
    ) throws -> ManagedObjectID {
        guard let uri = URL(string: "x-strata://\(saved.storeIdentifier.uuidString)/\(entity)/p\(row)") else {
            throw DemoFailure("no URI for \(entity) row \(row)")
        }
        return try coordinator.managedObjectID(forURIRepresentation: uri)
    }

    private func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw DemoFailure("check failed: " + message()) }
    }
}
