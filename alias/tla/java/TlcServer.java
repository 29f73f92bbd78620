// ALIAS: TLC in one long-lived JVM (alias/tla/tool_server.py starts and talks to it).
//
// Protocol, one request at a time: the client writes one line
//     <run folder> TAB <TLA-Library path, may be empty> TAB <TLC argument> TAB ... LF
// and reads back one line "<exit code>" LF, or "<exit code> recycle" LF when the server
// ends after this run (MAX_RUNS runs, or half its Metaspace or old generation in use).
// TLC's output (stdout and stderr) goes to <run folder>/alias-output.txt, as for a process
// run, so a run killed at its time limit leaves what it printed.
//
// Each request runs `tlc2.TLC` as its main() would, with the run folder as the user
// directory (relative file names resolve there), on a thread of its own named "main", in a
// fresh class loader over tla2tools.jar: TLC keeps its settings, the module table and the
// model's values in static fields, so no class of the tools is shared between two requests
// and each run starts from the state a fresh JVM gives it. What the JVM keeps (JIT-compiled
// JDK code, the jar's class bytes read once) is what makes a request cheaper than a process.
// After a run, the MBeans and the shutdown hook TLC registered are removed (they would keep
// the run's loader; a second MBean registration would print an error) and the standard
// modules TLC unpacked into java.io.tmpdir are deleted. If TLC calls System.exit, the
// server exits with that code (the client reads it as the run's exit code, as for a process).
package aliastools;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryUsage;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.lang.reflect.Field;
import java.io.IOException;
import java.security.CodeSigner;
import java.security.CodeSource;
import java.util.Arrays;
import java.util.HashMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.Collections;
import java.util.HashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import javax.management.MBeanServer;
import javax.management.ObjectName;

public final class TlcServer {
  /** Runs after which the server ends (the client starts a fresh one): some of each run's
   *  classes outlive it (a model checker's loader is not always collectable), so a server
   *  that ran for ever would fill its Metaspace. */
  private static final int MAX_RUNS = Integer.getInteger("alias.tlc_server.max_runs", 200);

  /** Whether the class metadata in use exceeds half of -XX:MaxMetaspaceSize, or the old
   *  generation after its last collection half of the heap (what earlier runs left would
   *  otherwise shrink a large model's heap below a process run's). */
  private static boolean memoryHigh() {
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      MemoryUsage u = "Metaspace".equals(pool.getName()) ? pool.getUsage()
          : pool.getName().contains("Old Gen") ? pool.getCollectionUsage() : null;
      if (u != null && u.getMax() > 0 && u.getUsed() > u.getMax() / 2) {
        return true;
      }
    }
    return false;
  }

  /** The server's folder (its working directory) and java.io.tmpdir, as it started. */
  private static final File HOME = new File(System.getProperty("user.dir"));
  private static final File TMP = new File(System.getProperty("java.io.tmpdir"));

  public static void main(String[] args) throws Exception {
    ParentWatch.start();
    System.clearProperty("alias.tlc_server.max_runs");  // a spec sees what a process's TLC sees
    // args[0]: tla2tools.jar, then any jar of Java overrides (the Community Modules'),
    // separated as on a class path: each run's loader defines the classes of all of them
    String[] paths = args[0].split(File.pathSeparator);
    URL[] jars = new URL[paths.length];
    for (int i = 0; i < paths.length; i++) {
      jars[i] = new File(paths[i]).toURI().toURL();
    }
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    OutputStream reply = new PrintStream(new FileOutputStream(FileDescriptor.out), false);
    String line;
    int runs = 0;
    while ((line = in.readLine()) != null) {
      String[] parts = line.split("\t", -1);
      String library = parts.length > 1 ? parts[1] : "";
      String[] tlcArgs = Arrays.copyOfRange(parts, Math.min(2, parts.length), parts.length);
      int code = runIsolated(args[0], jars, parts[0], library, tlcArgs);
      cleanUp();
      runs++;
      boolean recycle = runs >= MAX_RUNS || memoryHigh();
      reply.write((code + (recycle ? " recycle" : "") + "\n").getBytes(StandardCharsets.UTF_8));
      reply.flush();
      if (recycle) {
        System.exit(0);
      }
    }
  }

  /** One run with what a process run has: its own output file in the platform charset, an
   *  empty stdin (TLCSet("pause") reads it), the system properties of a JVM started with the
   *  jar on its class path, restored afterwards (TLCSet("-D...") sets them), and its own
   *  thread (TLC's ThreadLocals would otherwise keep each run's loader alive). */
  private static int runIsolated(String jarPath, URL[] jars, String dir, String library, String[] tlcArgs)
      throws Exception {
    Properties saved = (Properties) System.getProperties().clone();
    InputStream stdin = System.in;
    Set<Thread> hooks = shutdownHooks();
    int[] result = {1};
    try (PrintStream ps = new PrintStream(new FileOutputStream(new File(dir, "alias-output.txt")), true,
        Charset.defaultCharset().name())) {
      System.setOut(ps);
      System.setErr(ps);
      System.setIn(new ByteArrayInputStream(new byte[0]));
      System.setProperty("java.class.path", jarPath);
      System.setProperty("sun.java.command", "tlc2.TLC " + String.join(" ", tlcArgs));
      Thread t = new Thread(() -> result[0] = run(jars, dir, library, tlcArgs, ps), "main");
      t.start();
      t.join();
      ps.flush();
    } finally {
      System.setProperties(saved);
      System.setIn(stdin);
    }
    // TLC's model checker registers a shutdown hook per run, which would keep the run's
    // class loader: drop the hooks this run added (they only matter when a JVM ends)
    for (Thread h : shutdownHooks()) {
      if (!hooks.contains(h)) {
        Runtime.getRuntime().removeShutdownHook(h);
      }
    }
    return result[0];
  }

  /** One TLC run in a fresh class loader; TLC's exit code (what TLC.main passes to System.exit). */
  private static int run(URL[] jars, String dir, String library, String[] tlcArgs, PrintStream ps) {
    if (library.isEmpty()) {
      System.clearProperty("TLA-Library");
    } else {
      System.setProperty("TLA-Library", library);
    }
    try (URLClassLoader cl = new ToolsLoader(jars)) {
      // TLC looks up the Java overrides of modules (TLCGet, Naturals, and the index class
      // tlc2.overrides.TLCOverrides) by class name: they must come from this loader (the
      // server's own class path lacks the jars)
      Thread.currentThread().setContextClassLoader(cl);
      Class<?> toolIO = Class.forName("util.ToolIO", true, cl);
      toolIO.getField("out").set(null, ps);
      toolIO.getField("err").set(null, ps);
      toolIO.getMethod("setUserDir", String.class).invoke(null, dir);
      Class<?> tlcClass = Class.forName("tlc2.TLC", true, cl);
      Object tlc = tlcClass.getConstructor().newInstance();
      Method checkEnvironment = tlcClass.getDeclaredMethod("checkEnvironment");  // TLC.main's GC warning
      checkEnvironment.setAccessible(true);
      if (!(Boolean) tlcClass.getMethod("handleParameters", String[].class).invoke(tlc, (Object) tlcArgs)
          || !(Boolean) checkEnvironment.invoke(tlc)) {
        return 1;  // TLC.main: System.exit(1)
      }
      // TLC.main: a main file without a folder gets the default resolver (user dir + TLA-Library)
      Object resolver = Class.forName("util.SimpleFilenameToStream", true, cl).getConstructor().newInstance();
      tlcClass.getMethod("setResolver", Class.forName("util.FilenameToStream", true, cl)).invoke(tlc, resolver);
      int errorCode = (Integer) tlcClass.getMethod("process").invoke(tlc);
      return (Integer) Class.forName("tlc2.output.EC$ExitStatus", true, cl)
          .getMethod("errorConstantToExitStatus", int.class).invoke(null, errorCode);
    } catch (InvocationTargetException e) {
      ps.print("Exception in thread \"main\" ");  // what an uncaught exception in TLC.main prints
      e.getCause().printStackTrace(ps);
      return 1;
    } catch (Throwable t) {
      t.printStackTrace(ps);
      return 1;
    }
  }

  /** The JVM's shutdown hooks (empty without --add-opens java.base/java.lang=ALL-UNNAMED). */
  @SuppressWarnings("unchecked")
  private static Set<Thread> shutdownHooks() {
    try {
      Class<?> c = Class.forName("java.lang.ApplicationShutdownHooks");
      Field f = c.getDeclaredField("hooks");
      f.setAccessible(true);
      synchronized (c) {
        Map<Thread, Thread> hooks = (Map<Thread, Thread>) f.get(null);
        return hooks == null ? Collections.emptySet() : new HashSet<>(hooks.keySet());
      }
    } catch (ReflectiveOperationException | RuntimeException e) {
      return Collections.emptySet();
    }
  }

  /** A fresh loader over the jars per run that defines the classes from bytes read once
   *  (no unzipping per run; a class in two jars comes from the first); resources, code
   *  sources and packages as a URLClassLoader's over the same jars. */
  private static final class ToolsLoader extends URLClassLoader {
    private static Map<String, byte[]> classes;
    private static Map<String, Integer> origin;
    private static Manifest[] manifests;
    private final CodeSource[] sources;

    ToolsLoader(URL[] jars) throws IOException {
      super(jars, ClassLoader.getPlatformClassLoader());
      sources = new CodeSource[jars.length];
      for (int i = 0; i < jars.length; i++) {
        sources[i] = new CodeSource(jars[i], (CodeSigner[]) null);
      }
      synchronized (ToolsLoader.class) {
        if (classes == null) {
          read(jars);
        }
      }
    }

    private static void read(URL[] jars) throws IOException {
      Map<String, byte[]> found = new HashMap<>();
      Map<String, Integer> from = new HashMap<>();
      Manifest[] mf = new Manifest[jars.length];
      for (int i = 0; i < jars.length; i++) {
        try (JarFile jf = new JarFile(new File(jars[i].toURI()))) {
          mf[i] = jf.getManifest();
          for (JarEntry e : Collections.list(jf.entries())) {
            String name = e.getName();
            if (name.endsWith(".class")) {
              String cls = name.substring(0, name.length() - 6).replace('/', '.');
              if (!found.containsKey(cls)) {
                found.put(cls, jf.getInputStream(e).readAllBytes());
                from.put(cls, i);
              }
            }
          }
        } catch (java.net.URISyntaxException e) {
          throw new IOException(e);
        }
      }
      classes = found;
      origin = from;
      manifests = mf;
    }

    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
      byte[] b = classes.get(name);
      if (b == null) {
        throw new ClassNotFoundException(name);
      }
      int jar = origin.get(name);
      int dot = name.lastIndexOf('.');
      if (dot > 0 && getDefinedPackage(name.substring(0, dot)) == null) {
        try {
          if (manifests[jar] != null) {
            definePackage(name.substring(0, dot), manifests[jar], sources[jar].getLocation());
          } else {
            definePackage(name.substring(0, dot), null, null, null, null, null, null, null);
          }
        } catch (IllegalArgumentException racedAndDefined) {
          // defined meanwhile
        }
      }
      return defineClass(name, b, 0, b.length, sources[jar]);
    }
  }

  private static void cleanUp() {
    try {
      MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
      for (ObjectName n : mbs.queryNames(new ObjectName("tlc2*:*"), null)) {
        mbs.unregisterMBean(n);
      }
    } catch (Exception e) {
      // nothing registered or already gone
    }
    // the standard modules TLC unpacked, and what a run wrote by a relative path (a process
    // writes those into its run folder, which goes with it); not the folder's lock file,
    // which says the folder's owner lives (alias/tla/folders.py)
    File[] unpacked = TMP.listFiles();
    for (File f : unpacked == null ? new File[0] : unpacked) {
      delete(f);
    }
    File[] written = HOME.getName().startsWith("alias-tla-srv") ? HOME.listFiles() : null;
    for (File f : written == null ? new File[0] : written) {
      if (!f.equals(TMP) && !f.getName().equals(".alias-lock")) {
        delete(f);
      }
    }
  }

  private static void delete(File f) {
    File[] children = f.listFiles();
    for (File c : children == null ? new File[0] : children) {
      delete(c);
    }
    f.delete();
  }
}
