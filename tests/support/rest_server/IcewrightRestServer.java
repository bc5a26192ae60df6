// An Iceberg REST catalog server for icewright's tests, assembled from Iceberg Java
// 1.10.2's own server-side classes (CatalogHandlers, RESTObjectMapper/RESTSerializers,
// the request and response classes) over an InMemoryCatalog (pointers in memory) whose
// files go to a local warehouse through HadoopFileIO. Routing follows the REST OpenAPI
// spec's paths; it is written for these tests (Iceberg's RESTCatalogAdapter is a test class, not in the
// runtime jar).
//
// It lives in org.apache.iceberg.rest to reach the package-private RESTObjectMapper,
// the mapper Iceberg's client and servers use.
//
//   java -cp <iceberg runtime jar>:<pyspark jars>:<classes> \
//       org.apache.iceberg.rest.IcewrightRestServer <warehouse> [--oauth id:secret] \
//       [--prefix default-prefix] [--token-ttl seconds]
//
// It is a test server: commits are made atomic by one server-wide lock (every table
// commit and every multi-table transaction takes it), which a production catalog would
// do with its own storage's transactions.
//
// Prints "READY <open port> <oauth port>" once listening on 127.0.0.1; the second port
// checks OAuth2 bearer tokens (issued by its /v1/oauth/tokens). Exits when stdin closes.
// Each prefix is its own catalog: GET /v1/config?warehouse=<name> answers prefix=<name>. Test hooks (no auth):
//   POST /_test/faults   {"commit-status-after": 503, "drop-after-commit": 1, "count": n,
//                         "fail-commits": n}   set the faults for the next n table commits/transactions
//   GET  /_test/requests the request log ("METHOD path status" lines); DELETE clears it
//   POST /_test/vend     {"warehouse": name, "location": "s3://bucket/prefix", "config": {...},
//                         "storage-credentials": [{"prefix": ..., "config": {...}}]}
//                        a warehouse whose tables live at location and whose table responses
//                        (create, stage create, load, register) carry that config and those
//                        storage credentials, as a catalog that vends credentials answers
//                        X-Iceberg-Access-Delegation: vended-credentials. Its metadata files
//                        stay in the server's memory (InMemoryFileIO: the runtime jar has no S3
//                        client); clients read metadata from the responses, and the files they
//                        write (manifests, data) go to the location with the vended keys.
package org.apache.iceberg.rest;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.MetadataUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.UpdateRequirement;
import org.apache.iceberg.rest.requests.CommitTransactionRequest;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.CreateViewRequest;
import org.apache.iceberg.rest.requests.RegisterTableRequest;
import org.apache.iceberg.rest.requests.RenameTableRequest;
import org.apache.iceberg.rest.requests.UpdateNamespacePropertiesRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.rest.responses.LoadTableResponse;
import org.apache.iceberg.rest.responses.OAuthTokenResponse;
import org.apache.iceberg.rest.credentials.Credential;
import org.apache.iceberg.rest.credentials.ImmutableCredential;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.JsonNode;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;

public class IcewrightRestServer {
  private static final ObjectMapper MAPPER = RESTObjectMapper.mapper();

  // One backing catalog per prefix (the warehouse a client names in /v1/config), so
  // that tests sharing one server keep apart.
  private final Map<String, InMemoryCatalog> catalogs = new HashMap<>();
  private final String warehouse;
  private final String prefix;
  private final String oauth; // "id:secret" or null: no auth
  private final long tokenTtlSeconds;
  private int securedPort = -1;
  private final Map<String, Long> tokens = new ConcurrentHashMap<>(); // token -> expiry (ms)
  private final List<String> requestLog = new ArrayList<>();

  /** A warehouse that vends storage credentials (POST /_test/vend). */
  private record Vended(String location, Map<String, String> config, List<Credential> credentials) {}

  private final Map<String, Vended> vended = new ConcurrentHashMap<>();

  // Taken by every table commit and transaction: InMemoryCatalog swaps one table at a
  // time, so this lock is what makes a transaction all-or-nothing on this test server.
  private final Object commitLock = new Object();

  // faults for the next table commits
  private int faultCount = 0;
  private int statusAfterCommit = 0;
  private boolean dropAfterCommit = false;
  private int failCommits = 0;

  IcewrightRestServer(String warehouse, String prefix, String oauth, long tokenTtlSeconds) {
    this.warehouse = warehouse;
    this.prefix = prefix;
    this.oauth = oauth;
    this.tokenTtlSeconds = tokenTtlSeconds;
  }

  public static void main(String[] args) throws Exception {
    String warehouse = args[0];
    String prefix = "icewright";
    String oauth = null;
    long ttl = 3600;
    for (int i = 1; i < args.length; i += 2) {
      switch (args[i]) {
        case "--oauth" -> oauth = args[i + 1];
        case "--prefix" -> prefix = args[i + 1];
        case "--token-ttl" -> ttl = Long.parseLong(args[i + 1]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    IcewrightRestServer server = new IcewrightRestServer(warehouse, prefix, oauth, ttl);
    // Two listeners over the same catalog: the first open, the second (with --oauth)
    // checking bearer tokens.
    HttpServer open = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    HttpServer secured = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    server.securedPort = secured.getAddress().getPort();
    for (HttpServer http : List.of(open, secured)) {
      http.createContext("/", server::handle);
      http.setExecutor(Executors.newFixedThreadPool(8));
      http.start();
    }
    System.out.println("READY " + open.getAddress().getPort() + " " + server.securedPort);
    System.out.flush();
    // Stop when the test process closes stdin (or dies).
    while (System.in.read() >= 0) {
      // keep reading
    }
    System.exit(0);
  }

  private synchronized InMemoryCatalog catalogFor(String name) {
    if (!name.matches("[A-Za-z0-9_]{1,64}")) {
      throw new IllegalArgumentException("warehouse names are letters, digits and _: " + name);
    }
    return catalogs.computeIfAbsent(
        name,
        n -> {
          InMemoryCatalog catalog = new InMemoryCatalog();
          Vended vend = vended.get(n);
          if (vend != null) {
            // Metadata files in memory, table files at the vended location (see the top).
            catalog.initialize(n, Map.of("warehouse", vend.location()));
            return catalog;
          }
          catalog.initialize(n, Map.of("warehouse", warehouse + "/" + n));
          // InMemoryCatalog always keeps files in an InMemoryFileIO; the tests need them
          // on disk (icewright, pyiceberg and Spark read them, purge deletes them), so
          // its FileIO is swapped for HadoopFileIO on the local file system.
          try {
            java.lang.reflect.Field io = InMemoryCatalog.class.getDeclaredField("io");
            io.setAccessible(true);
            org.apache.hadoop.conf.Configuration conf = new org.apache.hadoop.conf.Configuration();
            // The raw local file system writes no .crc side files.
            conf.set("fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem");
            conf.setBoolean("fs.file.impl.disable.cache", true);
            io.set(catalog, new HadoopFileIO(conf));
          } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
          }
          return catalog;
        });
  }

  /** Thrown by a route to answer with an empty body and this status. */
  private static final class Status extends RuntimeException {
    final int code;

    Status(int code) {
      super(null, null, false, false);
      this.code = code;
    }
  }

  private void handle(HttpExchange ex) throws IOException {
    String method = ex.getRequestMethod();
    String path = ex.getRequestURI().getRawPath();
    int status;
    try {
      byte[] body = ex.getRequestBody().readAllBytes();
      Object response;
      if (path.startsWith("/_test/")) {
        response = testHook(method, path, body);
      } else {
        if (!path.equals("/v1/oauth/tokens")) {
          authorize(ex);
        }
        response = route(ex, method, path, query(ex), body);
      }
      status = response == null ? 204 : 200;
      log(method, path, status);
      send(ex, status, response);
    } catch (Status s) {
      status = s.code;
      log(method, path, status);
      ex.sendResponseHeaders(status, -1);
    } catch (DropConnection d) {
      log(method, path, -1);
      // No response: the JDK server closes the socket when a handler throws.
      throw d;
    } catch (Exception e) {
      status = errorStatus(e);
      if (status == 500) {
        e.printStackTrace();
      }
      log(method, path, status);
      ErrorResponse err =
          ErrorResponse.builder()
              .responseCode(status)
              .withType(e.getClass().getSimpleName())
              .withMessage(String.valueOf(e.getMessage()))
              .build();
      send(ex, status, err);
    }
    ex.close();
  }

  /** An error answered with a chosen status (the 5xx faults). */
  private static final class Injected extends RuntimeException {
    final int code;

    Injected(int code, String message) {
      super(message, null, false, false);
      this.code = code;
    }
  }

  private static final class DropConnection extends RuntimeException {
    DropConnection() {
      super(null, null, false, false);
    }
  }

  private synchronized void log(String method, String path, int status) {
    if (path.startsWith("/_test/")) {
      return;
    }
    requestLog.add(method + " " + path + " " + status);
  }

  private static int errorStatus(Exception e) {
    if (e instanceof Injected injected) {
      return injected.code;
    } else if (e instanceof NoSuchNamespaceException
        || e instanceof NoSuchTableException
        || e instanceof NoSuchViewException
        || e instanceof org.apache.iceberg.exceptions.NotFoundException) {
      return 404;
    } else if (e instanceof AlreadyExistsException
        || e instanceof CommitFailedException
        || e instanceof NamespaceNotEmptyException) {
      return 409;
    } else if (e instanceof NotAuthorizedException) {
      return 401;
    } else if (e instanceof ForbiddenException) {
      return 403;
    } else if (e instanceof ValidationException
        || e instanceof IllegalArgumentException
        || e instanceof IllegalStateException) {
      return 400;
    } else if (e instanceof UnsupportedOperationException) {
      return 406;
    }
    return 500;
  }

  private static void send(HttpExchange ex, int status, Object response) throws IOException {
    if (response == null || ex.getRequestMethod().equals("HEAD")) {
      ex.sendResponseHeaders(status, -1);
      return;
    }
    byte[] out =
        response instanceof byte[] b
            ? b
            : MAPPER.writeValueAsString(response).getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.sendResponseHeaders(status, out.length);
    try (OutputStream os = ex.getResponseBody()) {
      os.write(out);
    }
  }

  private static Map<String, String> query(HttpExchange ex) {
    Map<String, String> out = new HashMap<>();
    String raw = ex.getRequestURI().getRawQuery();
    if (raw == null || raw.isEmpty()) {
      return out;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      String key = eq < 0 ? pair : pair.substring(0, eq);
      String value = eq < 0 ? "" : pair.substring(eq + 1);
      out.put(
          URLDecoder.decode(key, StandardCharsets.UTF_8),
          URLDecoder.decode(value, StandardCharsets.UTF_8));
    }
    return out;
  }

  // ------------------------------------------------------------------ auth

  private void authorize(HttpExchange ex) {
    if (oauth == null || ex.getLocalAddress().getPort() != securedPort) {
      return;
    }
    String header = ex.getRequestHeaders().getFirst("Authorization");
    if (header == null || !header.startsWith("Bearer ")) {
      throw new NotAuthorizedException("missing bearer token");
    }
    Long expiry = tokens.get(header.substring("Bearer ".length()));
    if (expiry == null || expiry < System.currentTimeMillis()) {
      throw new NotAuthorizedException("invalid or expired token");
    }
  }

  private OAuthTokenResponse token(byte[] body) {
    Map<String, String> form =
        RESTUtil.decodeFormData(new String(body, StandardCharsets.UTF_8));
    if (oauth == null) {
      throw new UnsupportedOperationException("this server has no OAuth2");
    }
    String given = form.get("client_id") + ":" + form.get("client_secret");
    if (!"client_credentials".equals(form.get("grant_type")) || !oauth.equals(given)) {
      throw new NotAuthorizedException("bad client credentials");
    }
    String token = UUID.randomUUID().toString();
    tokens.put(token, System.currentTimeMillis() + tokenTtlSeconds * 1000);
    return OAuthTokenResponse.builder()
        .withToken(token)
        .withTokenType("bearer")
        .withIssuedTokenType("urn:ietf:params:oauth:token-type:access_token")
        .setExpirationInSeconds((int) tokenTtlSeconds)
        .build();
  }

  // ------------------------------------------------------------------ test hooks

  private synchronized Object testHook(String method, String path, byte[] body) throws IOException {
    if (path.equals("/_test/faults") && method.equals("POST")) {
      JsonNode node = MAPPER.readTree(body);
      faultCount = node.path("count").asInt(1);
      statusAfterCommit = node.path("commit-status-after").asInt(0);
      dropAfterCommit = node.path("drop-after-commit").asBoolean(false);
      failCommits = node.path("fail-commits").asInt(0);
      return null;
    } else if (path.equals("/_test/vend") && method.equals("POST")) {
      JsonNode node = MAPPER.readTree(body);
      String name = node.path("warehouse").asText();
      if (catalogs.containsKey(name)) {
        throw new IllegalArgumentException("warehouse " + name + " is in use already");
      }
      List<Credential> credentials = new ArrayList<>();
      for (JsonNode entry : node.path("storage-credentials")) {
        credentials.add(
            ImmutableCredential.builder()
                .prefix(entry.path("prefix").asText())
                .config(strings(entry.path("config")))
                .build());
      }
      vended.put(
          name, new Vended(node.path("location").asText(), strings(node.path("config")), credentials));
      return null;
    } else if (path.equals("/_test/requests") && method.equals("GET")) {
      return String.join("\n", requestLog).getBytes(StandardCharsets.UTF_8);
    } else if (path.equals("/_test/requests") && method.equals("DELETE")) {
      requestLog.clear();
      return null;
    }
    throw new Status(404);
  }

  private static Map<String, String> strings(JsonNode node) {
    Map<String, String> out = new HashMap<>();
    node.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
    return out;
  }

  /** ``response`` with the vended config and storage credentials of warehouse ``name``. */
  private LoadTableResponse vend(String name, LoadTableResponse response) {
    Vended vend = vended.get(name);
    if (vend == null) {
      return response;
    }
    LoadTableResponse.Builder builder =
        LoadTableResponse.builder()
            .withTableMetadata(response.tableMetadata())
            .addAllConfig(response.config())
            .addAllConfig(vend.config())
            .addAllCredentials(response.credentials())
            .addAllCredentials(vend.credentials());
    return builder.build();
  }

  /** The fault to apply to this commit: 0 none, else a status or -1 (drop). */
  private synchronized int takeCommitFault() {
    if (failCommits > 0) {
      failCommits -= 1;
      return 409;
    }
    if (faultCount <= 0) {
      return 0;
    }
    faultCount -= 1;
    return dropAfterCommit ? -1 : statusAfterCommit;
  }

  // ------------------------------------------------------------------ routing

  private static final List<String> ENDPOINTS =
      List.of(
          "GET /v1/{prefix}/namespaces",
          "POST /v1/{prefix}/namespaces",
          "GET /v1/{prefix}/namespaces/{namespace}",
          "HEAD /v1/{prefix}/namespaces/{namespace}",
          "DELETE /v1/{prefix}/namespaces/{namespace}",
          "POST /v1/{prefix}/namespaces/{namespace}/properties",
          "GET /v1/{prefix}/namespaces/{namespace}/tables",
          "POST /v1/{prefix}/namespaces/{namespace}/tables",
          "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
          "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
          "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
          "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
          "POST /v1/{prefix}/namespaces/{namespace}/register",
          "POST /v1/{prefix}/tables/rename",
          "POST /v1/{prefix}/transactions/commit",
          "GET /v1/{prefix}/namespaces/{namespace}/views",
          "POST /v1/{prefix}/namespaces/{namespace}/views",
          "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
          "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
          "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
          "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
          "POST /v1/{prefix}/views/rename");

  private Object route(
      HttpExchange ex, String method, String path, Map<String, String> query, byte[] body)
      throws IOException {
    if (path.equals("/v1/oauth/tokens") && method.equals("POST")) {
      return token(body);
    }
    if (path.equals("/v1/config") && method.equals("GET")) {
      Map<String, String> overrides = new HashMap<>();
      String name = query.getOrDefault("warehouse", prefix);
      catalogFor(name);
      overrides.put("prefix", name);
      List<Endpoint> endpoints = new ArrayList<>();
      for (String e : ENDPOINTS) {
        endpoints.add(Endpoint.fromString(e));
      }
      return ConfigResponse.builder()
          .withDefaults(new HashMap<>(Map.of("icewright.rest.test-default", "from-server")))
          .withOverrides(overrides)
          .withEndpoints(endpoints)
          .build();
    }
    String[] all = path.split("/", -1);
    if (all.length < 4 || !all[1].equals("v1")) {
      throw new Status(404);
    }
    InMemoryCatalog catalog = catalogFor(all[2]);
    String[] p = java.util.Arrays.copyOfRange(all, 3, all.length);
    for (int i = 0; i < p.length; i++) {
      p[i] = URLDecoder.decode(p[i].replace("+", "%2B"), StandardCharsets.UTF_8);
    }
    if (p.length == 2 && p[0].equals("tables") && p[1].equals("rename") && method.equals("POST")) {
      CatalogHandlers.renameTable(catalog, read(body, RenameTableRequest.class));
      return null;
    }
    if (p.length == 2
        && p[0].equals("transactions")
        && p[1].equals("commit")
        && method.equals("POST")) {
      commitTransaction(catalog, read(body, CommitTransactionRequest.class));
      return null;
    }
    if (p.length == 2 && p[0].equals("views") && p[1].equals("rename") && method.equals("POST")) {
      CatalogHandlers.renameView(catalog, read(body, RenameTableRequest.class));
      return null;
    }
    if (!p[0].equals("namespaces")) {
      throw new Status(404);
    }
    if (p.length == 1) {
      if (method.equals("GET")) {
        String parent = query.get("parent");
        Namespace ns = parent == null ? Namespace.empty() : RESTUtil.decodeNamespace(parent);
        return listNamespaces(catalog, ns, query);
      } else if (method.equals("POST")) {
        return CatalogHandlers.createNamespace(catalog, read(body, CreateNamespaceRequest.class));
      }
      throw new Status(405);
    }
    Namespace ns = Namespace.of(p[1].split("\u001f", -1));
    if (p.length == 2) {
      switch (method) {
        case "GET":
          return CatalogHandlers.loadNamespace(catalog, ns);
        case "HEAD":
          CatalogHandlers.namespaceExists(catalog, ns);
          return null;
        case "DELETE":
          CatalogHandlers.dropNamespace(catalog, ns);
          return null;
        default:
          throw new Status(405);
      }
    }
    if (p.length == 3 && p[2].equals("properties") && method.equals("POST")) {
      return CatalogHandlers.updateNamespaceProperties(
          catalog, ns, read(body, UpdateNamespacePropertiesRequest.class));
    }
    if (p.length == 3 && p[2].equals("register") && method.equals("POST")) {
      return vend(
          all[2], CatalogHandlers.registerTable(catalog, ns, read(body, RegisterTableRequest.class)));
    }
    if (p.length == 3 && p[2].equals("tables")) {
      if (method.equals("GET")) {
        return listTables(catalog, ns, query);
      } else if (method.equals("POST")) {
        CreateTableRequest req = read(body, CreateTableRequest.class);
        return vend(
            all[2],
            req.stageCreate()
                ? CatalogHandlers.stageTableCreate(catalog, ns, req)
                : CatalogHandlers.createTable(catalog, ns, req));
      }
      throw new Status(405);
    }
    if (p.length == 4 && p[2].equals("tables")) {
      TableIdentifier ident = TableIdentifier.of(ns, p[3]);
      switch (method) {
        case "GET":
          return vend(all[2], loadTable(catalog, ex, ident));
        case "HEAD":
          CatalogHandlers.tableExists(catalog, ident);
          return null;
        case "POST":
          return commitTable(catalog, ident, read(body, UpdateTableRequest.class));
        case "DELETE":
          if ("true".equals(query.get("purgeRequested"))) {
            CatalogHandlers.purgeTable(catalog, ident);
          } else {
            CatalogHandlers.dropTable(catalog, ident);
          }
          return null;
        default:
          throw new Status(405);
      }
    }
    if (p.length == 3 && p[2].equals("views")) {
      if (method.equals("GET")) {
        return listViews(catalog, ns, query);
      } else if (method.equals("POST")) {
        return CatalogHandlers.createView(catalog, ns, read(body, CreateViewRequest.class));
      }
      throw new Status(405);
    }
    if (p.length == 4 && p[2].equals("views")) {
      TableIdentifier ident = TableIdentifier.of(ns, p[3]);
      switch (method) {
        case "GET":
          return CatalogHandlers.loadView(catalog, ident);
        case "HEAD":
          CatalogHandlers.viewExists(catalog, ident);
          return null;
        case "POST":
          return CatalogHandlers.updateView(catalog, ident, read(body, UpdateTableRequest.class));
        case "DELETE":
          CatalogHandlers.dropView(catalog, ident);
          return null;
        default:
          throw new Status(405);
      }
    }
    throw new Status(404);
  }

  private static org.apache.iceberg.rest.responses.ListNamespacesResponse listNamespaces(
      InMemoryCatalog catalog, Namespace ns, Map<String, String> q) {
    return q.containsKey("pageSize")
        ? CatalogHandlers.listNamespaces(catalog, ns, q.get("pageToken"), q.get("pageSize"))
        : CatalogHandlers.listNamespaces(catalog, ns);
  }

  private static org.apache.iceberg.rest.responses.ListTablesResponse listTables(
      InMemoryCatalog catalog, Namespace ns, Map<String, String> q) {
    return q.containsKey("pageSize")
        ? CatalogHandlers.listTables(catalog, ns, q.get("pageToken"), q.get("pageSize"))
        : CatalogHandlers.listTables(catalog, ns);
  }

  private static org.apache.iceberg.rest.responses.ListTablesResponse listViews(
      InMemoryCatalog catalog, Namespace ns, Map<String, String> q) {
    return q.containsKey("pageSize")
        ? CatalogHandlers.listViews(catalog, ns, q.get("pageToken"), q.get("pageSize"))
        : CatalogHandlers.listViews(catalog, ns);
  }

  /** Load a table, answering 304 when the client's If-None-Match names the current state. */
  private LoadTableResponse loadTable(
      InMemoryCatalog catalog, HttpExchange ex, TableIdentifier ident) {
    LoadTableResponse response = CatalogHandlers.loadTable(catalog, ident);
    String etag = etag(response.metadataLocation());
    String given = ex.getRequestHeaders().getFirst("If-None-Match");
    ex.getResponseHeaders().set("ETag", etag);
    if (etag.equals(given)) {
      throw new Status(304);
    }
    return response;
  }

  private Object commitTable(
      InMemoryCatalog catalog, TableIdentifier ident, UpdateTableRequest request) {
    int fault = takeCommitFault();
    if (fault == 409) {
      throw new CommitFailedException("injected conflict (test fault)");
    }
    LoadTableResponse response;
    synchronized (commitLock) {
      response = CatalogHandlers.updateTable(catalog, ident, request);
    }
    if (fault == -1) {
      throw new DropConnection();
    } else if (fault != 0) {
      throw new Injected(fault, "injected status " + fault + " after applying the commit");
    }
    return response;
  }

  /**
   * A multi-table commit: every table's requirements are checked and its new metadata built
   * (as CatalogHandlers.updateTable builds it) before any table is swapped, all under the
   * commit lock, so either every table moves or none does (409 on a failed requirement).
   */
  private void commitTransaction(InMemoryCatalog catalog, CommitTransactionRequest request) {
    int fault = takeCommitFault();
    if (fault == 409) {
      throw new CommitFailedException("injected conflict (test fault)");
    }
    synchronized (commitLock) {
      List<TableOperations> ops = new ArrayList<>();
      List<TableMetadata> bases = new ArrayList<>();
      List<TableMetadata> updated = new ArrayList<>();
      java.util.Set<TableIdentifier> seen = new java.util.HashSet<>();
      for (UpdateTableRequest change : request.tableChanges()) {
        TableIdentifier ident = change.identifier();
        if (!seen.add(ident)) {
          throw new IllegalArgumentException("table " + ident + " appears twice in the transaction");
        }
        Table table = catalog.loadTable(ident);
        TableOperations tableOps = ((BaseTable) table).operations();
        TableMetadata base = tableOps.current();
        for (UpdateRequirement requirement : change.requirements()) {
          requirement.validate(base); // CommitFailedException: 409, nothing applied
        }
        TableMetadata.Builder builder = TableMetadata.buildFrom(base);
        for (MetadataUpdate update : change.updates()) {
          update.applyTo(builder);
        }
        ops.add(tableOps);
        bases.add(base);
        updated.add(builder.build());
      }
      for (int i = 0; i < ops.size(); i++) {
        if (!updated.get(i).changes().isEmpty()) {
          ops.get(i).commit(bases.get(i), updated.get(i));
        }
      }
    }
    if (fault == -1) {
      throw new DropConnection();
    } else if (fault != 0) {
      throw new Injected(fault, "injected status " + fault + " after applying the commit");
    }
  }

  private static String etag(String metadataLocation) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256")
              .digest(metadataLocation.getBytes(StandardCharsets.UTF_8));
      StringBuilder hex = new StringBuilder("\"");
      for (int i = 0; i < 16; i++) {
        hex.append(String.format("%02x", digest[i]));
      }
      return hex.append('"').toString();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static <T> T read(byte[] body, Class<T> type) throws IOException {
    T value = MAPPER.readValue(body, type);
    if (value instanceof RESTRequest request) {
      request.validate();
    }
    return value;
  }
}
