// stackpin sbom --dest DIR [-o FILE]: the SPDX 2.3 document of a staged tree.
#include <ostream>

#include "commands.hpp"
#include "core/package/sbom.hpp"
#include "format/json.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

namespace cli {

namespace {

struct SbomCli {
  std::string dest, output;
};

Outcome run_sbom(const SbomCli& c, Context& ctx) {
  core::SbomOptions o;
  o.stackpin_version = STACKPIN_VERSION;
  auto sde = source_date_epoch(ctx);
  if (!sde) return sde.error();
  o.created = *sde;
  auto r = core::sbom_for_dest(c.dest, knowledge::KnowledgeBase::embedded(), o);
  if (!r) return r.error();
  const bool to_stdout = c.output.empty() || c.output == "-";
  if (!to_stdout)
    if (auto st = util::write_file_atomic(c.output, r->text); !st) return st.error();
  if (ctx.json) {
    ctx.io.out << format::envelope("sbom", true, {},
                                   format::sbom_json(to_stdout ? "-" : c.output, r->packages, r->files, r->notes,
                                                     to_stdout ? std::optional<std::string>(r->text) : std::nullopt),
                                   nullptr);
    return k_exit_ok;
  }
  if (to_stdout) {
    ctx.io.out << r->text;
  } else {
    ctx.io.out << ctx.out_style.green("wrote") << " " << c.output << ": SPDX 2.3, " << r->packages << " packages, " << r->files
               << " files\n";
  }
  for (const auto& n : r->notes) ctx.io.err << "note: " << n << "\n";
  return k_exit_ok;
}

}  // namespace

void add_sbom(Command& app, Context& ctx) {
  auto c = std::make_shared<SbomCli>();
  auto* cmd = app.add_subcommand("sbom", "The SPDX 2.3 document of a staged tree: every NVIDIA archive, licence and file with its hashes");
  cmd->add_option("--dest", c->dest, "The staged tree")->required();
  cmd->add_option("-o", c->output, "Write to FILE instead of stdout");
  add_json_flag(cmd, ctx);
  cmd->callback([c, &ctx] { ctx.action = [c, &ctx] { return run_sbom(*c, ctx); }; });
}

}  // namespace cli
