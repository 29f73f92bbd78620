// ALIAS: SANY in one long-lived JVM (alias/tla/tool_server.py starts and talks to it).
//
// Protocol, one request at a time: the client writes one line
//     <absolute path of the root .tla file> TAB <TLA-Library path, may be empty> LF
// and reads back one line "<exit code> <n>" LF followed by n bytes of UTF-8 output: what
// `java tla2sany.SANY <file>` prints and the exit code it ends with (SANY's own
// SANYmain0 throws the exit code that SANYmain passes to System.exit). Before every
// request the tools' static module resolver is dropped and the user directory set to the
// file's folder, so that no module is resolved from an earlier request's folder. After a
// Throwable other than SANY's exit the server answers and exits (the client starts a
// fresh one). Compiled against tla2tools.jar v1.8.0 or later (SANYmain0 is new there).
package aliastools;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

public final class SanyServer {
  public static void main(String[] args) throws Exception {
    ParentWatch.start();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    OutputStream reply = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false);
    String line;
    while ((line = in.readLine()) != null) {
      int tab = line.indexOf('\t');
      String file = tab < 0 ? line : line.substring(0, tab);
      String library = tab < 0 ? "" : line.substring(tab + 1);
      ByteArrayOutputStream buf = new ByteArrayOutputStream();
      PrintStream ps = new PrintStream(buf, true, "UTF-8");
      System.setOut(ps);
      System.setErr(ps);
      util.ToolIO.out = ps;
      util.ToolIO.err = ps;
      int code = 0;
      boolean fatal = false;
      try {
        if (library.isEmpty()) {
          System.clearProperty("TLA-Library");
        } else {
          System.setProperty("TLA-Library", library);
        }
        File f = new File(file);
        util.ToolIO.reset();
        util.ToolIO.setUserDir(f.getParent());
        util.ToolIO.setDefaultResolver(null);
        tla2sany.drivers.SANY.SANYmain0(new String[] {f.getName()});
      } catch (tla2sany.drivers.SANYExitException e) {
        code = e.getExitCode();
      } catch (Throwable t) {
        t.printStackTrace(ps);
        code = 1;
        fatal = true;
      }
      ps.flush();
      byte[] out = buf.toByteArray();
      reply.write(((code & 0xFF) + " " + out.length + "\n").getBytes(StandardCharsets.UTF_8));
      reply.write(out);
      reply.flush();
      if (fatal) {
        System.exit(3);
      }
    }
  }
}
