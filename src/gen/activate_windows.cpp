// How Windows finds a DLL decides which cuDNN runs, so the scripts put this cuDNN's DLL directory
// first on PATH and take out the entries that are other cuDNN trees, by the rule of
// core/windows_path_rule.hpp, whose file patterns are embedded here as data: a CUDA toolkit's bin folder
// that also holds a stale cuDNN DLL stays (it holds cudart and cuBLAS), and the stale DLL is
// reported. Persistent changes go through the registry value itself, keeping its type
// (REG_EXPAND_SZ, so %SystemRoot%-style entries survive) and never through setx, which cuts PATH
// at 1024 characters; running programs are told with WM_SETTINGCHANGE. A process's PATH is the
// machine value followed by the user value, so a User-scope entry cannot precede the CUDA
// installer's machine entries: the script says so and offers Machine scope.
//
// The PowerShell is kept plain on purpose, since it cannot be run where it is generated: one
// function per job, every value embedded as a single-quoted literal through the quoting module,
// no variable directly followed by ':' inside a double-quoted string (PowerShell reads `$x:` as a
// drive-qualified variable and refuses the whole file), messages built by concatenation, no
// wildcard given to -LiteralPath, and a UTF-8 byte order mark. The Python line the script prints
// is a literal made by py_quote, never a PowerShell variable expanded inside Python source. Paths
// are joined with [System.IO.Path]::Combine, not Join-Path, which fails on a drive the machine
// does not have (a D:\ prefix copied elsewhere) before the script can say what is missing.
#include "gen/activate_windows.hpp"

#include <algorithm>

#include "gen/quote.hpp"
#include "util/strings.hpp"

namespace gen {

namespace {

std::string version_var(const std::string& v) {
  std::string out = "CUDA_PATH_V" + v;
  std::replace(out.begin(), out.end(), '.', '_');
  return out;
}

std::string ps_list(const std::vector<std::string>& v) {
  std::string s = "@(";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + ps_quote(v[i]);
  return s + ")";
}

std::string python_hint(const WindowsActivation& a) {
  std::string s = "import os";
  for (const auto& d : first_path_dirs(a)) s += "; os.add_dll_directory(" + py_quote(d) + ")";
  return s;
}

// What the tree holds, for the scripts' first line: "cuDNN 9.1.0.70", "CUDA 12.4 toolkit and cuDNN 9.1.0.70".
std::string tree_what(const WindowsActivation& a) {
  std::string cudnn = a.cudnn_version.empty() ? "" : "cuDNN " + a.cudnn_version;
  if (a.toolkit_bin_dirs.empty()) return cudnn;
  std::string toolkit = "CUDA " + a.cuda_version + " toolkit";
  return cudnn.empty() ? toolkit : toolkit + " and " + cudnn;
}

// The directories check-cudnn.ps1 expects in the tree.
std::vector<std::string> tree_dirs(const WindowsActivation& a) {
  std::vector<std::string> out;
  if (!a.dll_dir.empty()) out.push_back(a.dll_dir);
  out.push_back(a.include_dir);
  if (!a.import_lib.empty()) out.push_back(a.import_lib.substr(0, a.import_lib.rfind('\\')));
  for (const auto& d : a.toolkit_bin_dirs)
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  return out;
}

// The functions both scripts use: PATH split as cmd.exe and stackpin read it, and the rule.
const char* k_path_functions = R"PS(
# PATH split at ';' except inside double quotes, blanks around entries trimmed, empty entries dropped
function Split-PathValue([string]$Value) {
  $entries = New-Object System.Collections.Generic.List[string]
  $current = ''
  $quoted = $false
  foreach ($c in $Value.ToCharArray()) {
    if ($c -eq '"') { $quoted = -not $quoted }
    if ($c -eq ';' -and -not $quoted) {
      $entries.Add($current.Trim())
      $current = ''
    } else {
      $current += $c
    }
  }
  $entries.Add($current.Trim())
  return @($entries | Where-Object { $_ -ne '' })
}

function Get-FullDir([string]$Entry) {
  $dir = [Environment]::ExpandEnvironmentVariables($Entry)
  try { $dir = [System.IO.Path]::GetFullPath($dir) } catch { }
  # "C:\" stays itself ("C:" would mean the current directory on C), and so does "\\"
  $trimmed = $dir.TrimEnd('\')
  if ($trimmed.Length -lt 3) { return $dir }
  return $trimmed
}

function Get-CudnnDlls([string]$Dir) {
  if (-not $Dir -or $Dir.Contains('"') -or -not (Test-Path -LiteralPath $Dir -PathType Container)) { return @() }
  $names = @(Get-ChildItem -LiteralPath $Dir -File -ErrorAction SilentlyContinue | ForEach-Object { $_.Name })
  return @($names | Where-Object { $name = $_; @($CudnnPatterns | Where-Object { $name -like $_ }).Count -gt 0 })
}

# 'cudnn-only': cuDNN DLLs and no CUDA toolkit DLL (another cuDNN tree: taken out of PATH);
# 'toolkit-with-cudnn': a CUDA bin (or conda Library\bin) holding a stale cuDNN DLL (kept, reported);
# 'other': kept as it is
function Get-EntryKind([string]$Dir) {
  if (@(Get-CudnnDlls $Dir).Count -eq 0) { return 'other' }
  $names = @(Get-ChildItem -LiteralPath $Dir -File -ErrorAction SilentlyContinue | ForEach-Object { $_.Name })
  $toolkit = @($names | Where-Object { $name = $_; @($ToolkitPatterns | Where-Object { $name -like $_ }).Count -gt 0 })
  if ($toolkit.Count -gt 0) { return 'toolkit-with-cudnn' }
  return 'cudnn-only'
}
)PS";

// activate.ps1: its functions (one per job), then the main part.
const char* k_activate_functions = R"PS(
# The new PATH value: $FirstDirs first (cuDNN's DLLs, the staged toolkit's bin), other cuDNN trees
# out, no directory twice.
function Get-NewPath([string]$Current) {
  $kept = New-Object System.Collections.Generic.List[string]
  $removed = New-Object System.Collections.Generic.List[string]
  $stale = New-Object System.Collections.Generic.List[string]
  $seen = New-Object System.Collections.Generic.List[string]
  $ours = @($FirstDirs | ForEach-Object { Get-FullDir $_ })
  foreach ($entry in Split-PathValue $Current) {
    $dir = Get-FullDir $entry
    $duplicate = @($seen | Where-Object { $_ -ieq $dir }).Count -gt 0
    $seen.Add($dir)
    if ($ours -icontains $dir) { continue }
    $kind = Get-EntryKind $dir
    if ($duplicate -or $kind -eq 'cudnn-only') {
      $removed.Add($entry)
      continue
    }
    if ($kind -eq 'toolkit-with-cudnn') {
      foreach ($dll in Get-CudnnDlls $dir) { $stale.Add([System.IO.Path]::Combine($dir, $dll)) }
    }
    $kept.Add($entry)
  }
  $value = (@($FirstDirs) + $kept) -join ';'
  return [pscustomobject]@{ Value = $value; Removed = $removed; Stale = $stale }
}

function Get-MissingDlls {
  if (-not $CudnnBin) { return @() }
  return @($CudnnDlls | Where-Object { -not (Test-Path -LiteralPath ([System.IO.Path]::Combine($CudnnBin, $_)) -PathType Leaf) })
}

function Test-Administrator {
  $principal = New-Object Security.Principal.WindowsPrincipal([Security.Principal.WindowsIdentity]::GetCurrent())
  return $principal.IsInRole([Security.Principal.WindowsBuiltInRole]::Administrator)
}

function Send-EnvironmentChange {
  if (-not ('Stackpin.NativeMethods' -as [type])) {
    Add-Type -Namespace Stackpin -Name NativeMethods -MemberDefinition @'
[DllImport("user32.dll", SetLastError = true, CharSet = CharSet.Unicode)]
public static extern IntPtr SendMessageTimeout(IntPtr hWnd, uint Msg, UIntPtr wParam, string lParam,
                                               uint fuFlags, uint uTimeout, out UIntPtr lpdwResult);
'@
  }
  $result = [UIntPtr]::Zero
  # HWND_BROADCAST, WM_SETTINGCHANGE, SMTO_ABORTIFHUNG, 5 s
  [void][Stackpin.NativeMethods]::SendMessageTimeout([IntPtr]0xffff, 0x1A, [UIntPtr]::Zero, 'Environment', 2, 5000, [ref]$result)
}

function Show-Plan($Plan, [string]$Where) {
  foreach ($entry in $Plan.Removed) { Write-Host ('takes out of PATH (another cuDNN tree, or named twice): ' + $entry) }
  foreach ($dll in $Plan.Stale) {
    Write-Host ('keeps on PATH, but this stale cuDNN DLL stays in a CUDA directory: ' + $dll)
    Write-Host '  delete it if nothing needs it (stackpin stage --remove-stale does for a cuda-merge tree)'
  }
  Write-Host ('new ' + $Where + ' PATH: ' + $Plan.Value)
  if ($CudnnVersion) { Write-Host ('sets ' + $Where + ' CUDNN_PATH = ' + $CudnnRoot) }
  if ($CudaPath) { Write-Host ('sets ' + $Where + ' CUDA_PATH = ' + $CudaPath + ' (replacing the value the CUDA installer set, if another)') }
  if ($CudaPath -and $CudaPathVar) { Write-Host ('sets ' + $Where + ' ' + $CudaPathVar + ' = ' + $CudaPath) }
}

function Set-SessionEnvironment([string]$Value) {
  $env:Path = $Value
  if ($CudnnVersion) { $env:CUDNN_PATH = $CudnnRoot }
  if ($CudaPath) { $env:CUDA_PATH = $CudaPath }
  if ($CudaPath -and $CudaPathVar) { Set-Item -LiteralPath ('Env:' + $CudaPathVar) -Value $CudaPath -Confirm:$false }
}

function Set-RegistryEnvironment([string]$Key, [string]$Value, $Kind) {
  # the registry value itself, keeping its type; never setx, which cuts PATH at 1024 characters
  # -Confirm:$false: one confirmation (ShouldProcess below) covers them all
  Set-ItemProperty -LiteralPath $Key -Name 'Path' -Value $Value -Type $Kind -Confirm:$false
  if ($CudnnVersion) { Set-ItemProperty -LiteralPath $Key -Name 'CUDNN_PATH' -Value $CudnnRoot -Type String -Confirm:$false }
  if ($CudaPath) { Set-ItemProperty -LiteralPath $Key -Name 'CUDA_PATH' -Value $CudaPath -Type String -Confirm:$false }
  if ($CudaPath -and $CudaPathVar) { Set-ItemProperty -LiteralPath $Key -Name $CudaPathVar -Value $CudaPath -Type String -Confirm:$false }
  Send-EnvironmentChange
}
)PS";

const char* k_activate_main = R"PS(
$missing = Get-MissingDlls
if ($missing.Count -gt 0) {
  Write-Warning ('cuDNN ' + $CudnnVersion + ' DLLs missing from ' + $CudnnBin + ': ' + ($missing -join ', ') +
                 '. Copy the whole staged tree to ' + $CudnnRoot + ' first.')
}

$key = $null
$kind = 'ExpandString'
$where = 'session'
if ($Scope -eq 'Process') {
  $current = $env:Path
} else {
  if ($Scope -eq 'Machine') {
    $key = 'HKLM:\SYSTEM\CurrentControlSet\Control\Session Manager\Environment'
  } else {
    Write-Warning ('Windows builds PATH as the machine entries followed by the user entries, so a User-scope ' +
                   'entry cannot come before the CUDA installer''s machine entries (CUDA\...\bin). Use -Scope Machine ' +
                   '(administrator) to put this cuDNN first for every program.')
    $key = 'HKCU:\Environment'
  }
  $where = $Scope
  $item = Get-Item -LiteralPath $key
  $current = $item.GetValue('Path', '', 'DoNotExpandEnvironmentNames')
  if ($item.GetValueNames() -contains 'Path') { $kind = $item.GetValueKind('Path') }
}
$plan = Get-NewPath $current
Show-Plan $plan $where

if ($WhatIfPreference) {
  Write-Host 'WhatIf: nothing was changed.'
  return
}
if ($Scope -eq 'Machine' -and -not (Test-Administrator)) {
  throw 'Machine scope changes the system PATH: run this from an administrator PowerShell (or see the plan with -WhatIf)'
}
if (-not $PSCmdlet.ShouldProcess(($where + ' PATH'), ('put ' + ($FirstDirs -join ', ') + ' first'))) { return }

if ($Scope -eq 'Process') {
  Set-SessionEnvironment $plan.Value
} else {
  Set-RegistryEnvironment $key $plan.Value $kind
  Set-SessionEnvironment (Get-NewPath $env:Path).Value
  Write-Host 'Terminals and programs that are already open keep their old PATH: open a new terminal.'
}
foreach ($entry in $plan.Removed) { Write-Host ('removed from PATH: ' + $entry) }
Write-Host ('first on PATH: ' + ($FirstDirs -join ', '))
Write-Host 'Python 3.8+ does not search PATH for the DLLs of extension modules. Before importing, run'
Write-Host ('  ' + $PythonLine)
Write-Host 'or put that line, as it is (starting with "import"), into a .pth file such as stackpin-cudnn.pth in the'
Write-Host 'environment''s site-packages: Python runs such a line at every start.'
)PS";

// check-cudnn.ps1: the result list, one function per check (numbered as in the script), the main part.
const char* k_check_results = R"PS(
$script:results = New-Object System.Collections.Generic.List[object]
function Add-Result([string]$Check, [string]$Status, [string]$Message, [string]$Fix) {
  $script:results.Add([pscustomobject]@{ check = $Check; status = $Status; message = $Message; fix = $Fix })
}
)PS";

const char* k_check_tree = R"PS(
# 1. the tree: its directories, every staged file and its SHA-256 (a half-copied or altered tree fails here)
function Test-Tree {
  foreach ($dir in $TreeDirs) {
    if (-not (Test-Path -LiteralPath $dir -PathType Container)) {
      Add-Result 'tree' 'fail' ('directory missing: ' + $dir) ('copy the whole staged tree (stackpin stage --target windows) to ' + $CudnnRoot)
      return
    }
  }
  $lines = @($FileList -split "`n" | Where-Object { $_.StartsWith('f ') })
  if ($lines.Count -eq 0) {
    Add-Result 'tree' 'note' 'no file hashes in this script (generated without a staged tree): the files are not checked' 'stage the tree with stackpin stage, which writes this script with them'
    return
  }
  $missing = 0
  $changed = 0
  foreach ($line in $lines) {
    $hash = $line.Substring(2, 64)
    $path = [System.IO.Path]::Combine($CudnnRoot, $line.Substring(67).TrimEnd("`r"))
    if (-not (Test-Path -LiteralPath $path -PathType Leaf)) {
      $missing++
      if ($missing -le 3) { Add-Result 'tree' 'fail' ('file missing: ' + $path) 'copy the whole staged tree again; a partial copy loses files' }
    } elseif (-not $Quick -and (Get-FileHash -LiteralPath $path -Algorithm SHA256).Hash -ine $hash) {
      $changed++
      if ($changed -le 3) { Add-Result 'tree' 'fail' ('file differs from the staged one: ' + $path) 'copy the staged tree again (an interrupted copy, or another version over it)' }
    }
  }
  if ($missing -eq 0 -and $changed -eq 0) {
    $how = if ($Quick) { 'present (not hashed: -Quick)' } else { 'present and their SHA-256 as staged' }
    Add-Result 'tree' 'ok' ([string]$lines.Count + ' files ' + $how) ''
  } elseif ($missing + $changed -gt 3) {
    Add-Result 'tree' 'fail' ([string]$missing + ' missing and ' + [string]$changed + ' changed files in all') 'copy the whole staged tree again'
  }
}
)PS";

const char* k_check_version = R"PS(
# 2. the version cudnn_version.h says, and every DLL of this cuDNN
function Test-Version {
  if (-not $HeaderVersion) { return }
  $header = [System.IO.Path]::Combine($Include, 'cudnn_version.h')
  if (-not (Test-Path -LiteralPath $header -PathType Leaf)) {
    Add-Result 'version' 'fail' ('missing: ' + $header) 'copy the whole staged tree again'
    return
  }
  $text = Get-Content -LiteralPath $header -Raw
  $parts = foreach ($name in @('CUDNN_MAJOR', 'CUDNN_MINOR', 'CUDNN_PATCHLEVEL')) {
    if ($text -match ('#define\s+' + $name + '\s+(\d+)')) { $Matches[1] } else { '?' }
  }
  $found = $parts -join '.'
  if ($found -eq $HeaderVersion) { Add-Result 'version' 'ok' ('cudnn_version.h says ' + $found) '' }
  else { Add-Result 'version' 'fail' ('cudnn_version.h says ' + $found + ', the manifest pins ' + $HeaderVersion) ('copy the cuDNN ' + $HeaderVersion + ' tree over it (another version was copied there)') }
  $missing = @($CudnnDlls | Where-Object { -not (Test-Path -LiteralPath ([System.IO.Path]::Combine($CudnnBin, $_)) -PathType Leaf) })
  if ($missing.Count -eq 0) { Add-Result 'dlls' 'ok' ('all ' + [string]$CudnnDlls.Count + ' DLLs of cuDNN in ' + $CudnnBin) '' }
  else { Add-Result 'dlls' 'fail' ('missing from ' + $CudnnBin + ': ' + ($missing -join ', ')) 'copy the whole staged tree again; cuDNN loads its sub-libraries at run time' }
}
)PS";

const char* k_check_path_order = R"PS(
# 3. this cuDNN first on PATH: the process value, and the Machine and User values in the registry
function Test-PathOrder {
  if (-not $CudnnBin) { return }
  $ours = Get-FullDir $CudnnBin
  $entries = @(Split-PathValue $env:Path)
  $index = -1
  for ($i = 0; $i -lt $entries.Count; $i++) { if ((Get-FullDir $entries[$i]) -ieq $ours) { $index = $i; break } }
  if ($index -lt 0) {
    Add-Result 'path' 'fail' ($CudnnBin + ' is not on PATH') 'run activate.ps1 (-Scope Machine to make it permanent), then open a new terminal'
  } else {
    $ahead = @()
    for ($i = 0; $i -lt $index; $i++) {
      $dir = Get-FullDir $entries[$i]
      if (@(Get-CudnnDlls $dir).Count -gt 0) { $ahead += $dir }
    }
    if ($ahead.Count -eq 0) { Add-Result 'path' 'ok' ($CudnnBin + ' comes before every other cuDNN on PATH') '' }
    else { Add-Result 'path' 'fail' ('a cuDNN comes first on PATH: ' + ($ahead -join ', ')) 'run activate.ps1 -Scope Machine (it takes other cuDNN trees out), or delete the stale DLLs' }
  }
  $machine = (Get-Item -LiteralPath 'HKLM:\SYSTEM\CurrentControlSet\Control\Session Manager\Environment').GetValue('Path', '', 'DoNotExpandEnvironmentNames')
  $user = (Get-Item -LiteralPath 'HKCU:\Environment').GetValue('Path', '', 'DoNotExpandEnvironmentNames')
  $machineDirs = @(Split-PathValue $machine | ForEach-Object { Get-FullDir $_ })
  $inMachine = $machineDirs -icontains $ours
  if ($inMachine) {
    $before = @()
    foreach ($dir in $machineDirs) {
      if ($dir -ieq $ours) { break }
      if (@(Get-CudnnDlls $dir).Count -gt 0) { $before += $dir }
    }
    if ($before.Count -gt 0) {
      Add-Result 'registry-path' 'fail' ('in the Machine PATH, but after a cuDNN at ' + ($before -join ', ')) 'run activate.ps1 -Scope Machine (administrator) to put it first'
      return
    }
  }
  $inUser = @(Split-PathValue $user | Where-Object { (Get-FullDir $_) -ieq $ours }).Count -gt 0
  if ($inMachine) { Add-Result 'registry-path' 'ok' 'first among the cuDNN entries of the Machine PATH in the registry (new terminals and services get it)' '' }
  elseif ($inUser) { Add-Result 'registry-path' 'note' 'only in the User PATH: it comes after every Machine entry, the CUDA installer''s included' 'run activate.ps1 -Scope Machine (administrator)' }
  else { Add-Result 'registry-path' 'note' 'not in the registry PATH: only this session has it' 'run activate.ps1 -Scope Machine (administrator) to make it permanent' }
}
)PS";

const char* k_check_system_dirs = R"PS(
# 4. the DLL search order looks in System32 and the Windows directory before PATH
function Test-SystemDirs {
  $bad = @()
  foreach ($dir in @([Environment]::SystemDirectory, $env:windir)) {
    foreach ($dll in Get-CudnnDlls $dir) { $bad += [System.IO.Path]::Combine($dir, $dll) }
  }
  if ($bad.Count -eq 0) { Add-Result 'system-dirs' 'ok' 'no cuDNN DLL in System32 or the Windows directory' '' }
  else { Add-Result 'system-dirs' 'fail' ('a cuDNN DLL is searched before any PATH entry: ' + ($bad -join ', ')) 'delete it: System32 and the Windows directory come before PATH' }
}
)PS";

const char* k_check_cuda_bins = R"PS(
# 5. the pinned CUDA's bin directories on PATH
function Test-CudaBins {
  if ($CudaBins.Count -eq 0) { return }
  $entries = @(Split-PathValue $env:Path | ForEach-Object { Get-FullDir $_ })
  $missing = @($CudaBins | Where-Object { $entries -inotcontains (Get-FullDir $_) })
  if ($missing.Count -eq 0) { Add-Result 'cuda-bin' 'ok' ('the CUDA toolkit on PATH: ' + ($CudaBins -join ', ')) '' }
  elseif ($ToolkitHere) { Add-Result 'cuda-bin' 'fail' ('not on PATH: ' + ($missing -join ', ')) 'run activate.ps1 of this tree (-Scope Machine to make it permanent), then open a new terminal' }
  else { Add-Result 'cuda-bin' 'fail' ('not on PATH: ' + ($missing -join ', ')) 'install the pinned CUDA toolkit, or add its bin (and bin\x64 from CUDA 13, bin\arm64 on Windows on Arm) to the Machine PATH' }
}
)PS";

const char* k_check_zlibwapi = R"PS(
# 6. zlibwapi.dll, which cuDNN 8.3 up to 9.1 load and the zip does not ship, built for $Arch
function Get-PeMachine([string]$File) {
  $bytes = New-Object byte[] 4096
  $stream = [System.IO.File]::OpenRead($File)
  try { $n = $stream.Read($bytes, 0, 4096) } finally { $stream.Close() }
  if ($n -lt 64 -or $bytes[0] -ne 0x4D -or $bytes[1] -ne 0x5A) { return 'not a DLL' }
  $pe = [BitConverter]::ToInt32($bytes, 0x3C)
  if ($pe -lt 0 -or $pe + 6 -gt $n) { return 'not a DLL' }
  $machine = [BitConverter]::ToUInt16($bytes, $pe + 4)
  if ($machine -eq 0x8664) { return 'x64' }
  if ($machine -eq 0xAA64) { return 'arm64' }
  if ($machine -eq 0x14C) { return 'x86' }
  return 'other'
}
function Test-Zlib {
  if (-not $NeedZlib) { return }
  $dirs = @($CudnnBin, [Environment]::SystemDirectory) + @(Split-PathValue $env:Path | ForEach-Object { Get-FullDir $_ })
  $found = $dirs | Where-Object { $_ -and (Test-Path -LiteralPath ([System.IO.Path]::Combine($_, 'zlibwapi.dll')) -PathType Leaf) } | Select-Object -First 1
  if (-not $found) {
    Add-Result 'zlibwapi' 'fail' 'zlibwapi.dll is not reachable' ('put the ' + $Arch + ' zlibwapi.dll into ' + $CudnnBin + ' (cuDNN fails with "Could not locate zlibwapi.dll" otherwise)')
    return
  }
  $file = [System.IO.Path]::Combine($found, 'zlibwapi.dll')
  $machine = Get-PeMachine $file
  if ($machine -eq $Arch) { Add-Result 'zlibwapi' 'ok' ('zlibwapi.dll (' + $Arch + ') in ' + $found) '' }
  else { Add-Result 'zlibwapi' 'fail' ($file + ' is ' + $machine + ', not ' + $Arch) ('replace it with the ' + $Arch + ' build of zlibwapi.dll (a DLL built for another machine fails to load)') }
}
)PS";

const char* k_check_vc_runtime = R"PS(
# 7. the Visual C++ runtime cuDNN's DLLs link against
function Test-VcRuntime {
  $missing = @(@('msvcp140.dll', 'vcruntime140.dll', 'vcruntime140_1.dll') | Where-Object {
    -not (Test-Path -LiteralPath ([System.IO.Path]::Combine([Environment]::SystemDirectory, $_)) -PathType Leaf) })
  if ($missing.Count -eq 0) { Add-Result 'vc-runtime' 'ok' 'the VC++ 2015-2022 runtime is installed' '' }
  else { Add-Result 'vc-runtime' 'fail' ('missing: ' + ($missing -join ', ')) ('install the Microsoft Visual C++ 2015-2022 Redistributable (' + $Arch + ')') }
}

# 8. the machine: DLLs built for x64 do not load into an Arm64 process, nor Arm64 ones into x64
function Test-Architecture {
  $dll = [System.IO.Path]::Combine($CudnnBin, $MainDll)
  if ($CudnnBin -and (Test-Path -LiteralPath $dll -PathType Leaf)) {
    $machine = Get-PeMachine $dll
    if ($machine -ne $Arch) {
      Add-Result 'architecture' 'fail' ($dll + ' is ' + $machine + ', this tree is for ' + $Arch) ('stage the ' + $Arch + ' archive again (stackpin stage --target windows)')
      return
    }
  }
  # this PowerShell's architecture, and the machine's: PROCESSOR_ARCHITEW6432 is set under WOW64 and emulation
  $shell = $env:PROCESSOR_ARCHITECTURE
  $native = $shell
  if ($env:PROCESSOR_ARCHITEW6432) { $native = $env:PROCESSOR_ARCHITEW6432 }
  $want = 'AMD64'
  if ($Arch -eq 'arm64') { $want = 'ARM64' }
  if ($native -eq $want -and $shell -eq $want) { Add-Result 'architecture' 'ok' ('an ' + $native + ' machine, and the tree is ' + $Arch) '' }
  elseif ($native -eq $want) { Add-Result 'architecture' 'note' ('an ' + $native + ' machine; this PowerShell runs as ' + $shell + ' (WOW64 or emulation)') ('the programs that load this tree must be native ' + $Arch + ' programs') }
  elseif ($native -eq 'ARM64' -and $Arch -eq 'x64') { Add-Result 'architecture' 'note' 'x64 DLLs on an ARM64 machine: only emulated x64 programs can load them' 'for native Arm64 programs stage the arm64 tree ([targets.windows] arch = "arm64")' }
  else { Add-Result 'architecture' 'fail' ('the tree holds ' + $Arch + ' DLLs, but the machine is ' + $native) 'stage the tree for this machine (arch in [targets.windows])' }
}
)PS";

const char* k_check_driver = R"PS(
# 9. the driver against the minimum for this CUDA version
function Test-Driver {
  $smi = Get-Command nvidia-smi -ErrorAction SilentlyContinue
  if (-not $smi) {
    $want = if ($MinDriver) { ' ' + $MinDriver + ' or newer' } else { '' }
    Add-Result 'driver' 'fail' 'nvidia-smi not found: no NVIDIA driver' ('install the NVIDIA driver' + $want)
    return
  }
  $output = [string](& $smi.Source --query-gpu=driver_version --format=csv,noheader 2>&1 | Select-Object -First 1)
  $parsed = $null
  if ($LASTEXITCODE -ne 0 -or -not [version]::TryParse($output.Trim(), [ref]$parsed)) {
    Add-Result 'driver' 'fail' ('nvidia-smi cannot report the driver: ' + $output.Trim()) 'reinstall the NVIDIA driver (nvidia-smi fails when the driver and its tools disagree)'
    return
  }
  # [version] needs at least two parts ("580" is a branch floor)
  $min = if ($MinDriver -and $MinDriver -notmatch '[.]') { $MinDriver + '.0' } else { $MinDriver }
  if ($min -and ($parsed -lt [version]$min)) { Add-Result 'driver' 'fail' ('NVIDIA driver ' + $output.Trim() + ' is older than ' + $MinDriver) ('update the NVIDIA driver to ' + $MinDriver + ' or newer') }
  else { Add-Result 'driver' 'ok' ('NVIDIA driver ' + $output.Trim()) '' }
}
)PS";

const char* k_check_process = R"PS(
# 10. what a running process really loaded (the seed's own check: Process Explorer's DLL view)
function Test-ProcessModules {
  if (-not $Process) { return }
  $name = $Process -replace '\.exe$', ''  # process names carry no .exe
  $procs = @(Get-Process -Name $name -ErrorAction SilentlyContinue)
  if ($procs.Count -eq 0) {
    Add-Result 'process' 'fail' ('no running process named ' + $Process) 'start it and import your framework first (import torch), then run this check again'
    return
  }
  foreach ($p in $procs) {
    $modules = @()
    try { $modules = @($p.Modules | Where-Object { $_.ModuleName -like 'cudnn*' -or $_.ModuleName -like 'cudart*' }) }
    catch { Add-Result 'process' 'note' ('cannot read the modules of ' + $Process + ' (pid ' + [string]$p.Id + '): ' + $_.Exception.Message) 'run this check from an administrator PowerShell of the same bitness'; continue }
    if (-not $CudnnBin) {
      $cudart = @($modules | Where-Object { $_.ModuleName -like 'cudart*' })
      if ($cudart.Count -eq 0) { Add-Result 'process' 'note' ($Process + ' (pid ' + [string]$p.Id + ') has not loaded the CUDA runtime yet') 'run a CUDA call first'; continue }
      foreach ($m in $cudart) {
        $dir = Get-FullDir (Split-Path -Parent $m.FileName)
        if (@($CudaBins | Where-Object { (Get-FullDir $_) -ieq $dir }).Count -gt 0) { Add-Result 'process' 'ok' ($Process + ' (pid ' + [string]$p.Id + ') loaded ' + $m.FileName) '' }
        else { Add-Result 'process' 'fail' ($Process + ' (pid ' + [string]$p.Id + ') loaded ' + $m.FileName) 'another CUDA runtime wins for this process: it comes with the framework or from earlier on its DLL search path' }
      }
      continue
    }
    $cudnn = @($modules | Where-Object { $_.ModuleName -like 'cudnn*' })
    if ($cudnn.Count -eq 0) { Add-Result 'process' 'note' ($Process + ' (pid ' + [string]$p.Id + ') has not loaded cuDNN yet') 'run a convolution first (cuDNN loads on first use)'; continue }
    foreach ($m in $modules) {
      $dir = Split-Path -Parent $m.FileName
      if ($m.ModuleName -like 'cudnn*' -and (Get-FullDir $dir) -ine (Get-FullDir $CudnnBin)) {
        Add-Result 'process' 'fail' ($Process + ' (pid ' + [string]$p.Id + ') loaded ' + $m.FileName) ('another cuDNN wins for this process: it comes with the framework (torch\lib) or from earlier on its DLL search path; see stackpin doctor --windows-root')
      } else {
        Add-Result 'process' 'ok' ($Process + ' (pid ' + [string]$p.Id + ') loaded ' + $m.FileName) ''
      }
    }
  }
}
)PS";

const char* k_check_main = R"PS(
Test-Tree
Test-Version
Test-PathOrder
Test-SystemDirs
Test-CudaBins
Test-Zlib
Test-VcRuntime
Test-Architecture
Test-Driver
Test-ProcessModules

$failures = @($script:results | Where-Object { $_.status -eq 'fail' }).Count
if ($Json) {
  [pscustomobject]@{ schema = 1; ok = ($failures -eq 0); failures = $failures; checks = $script:results } | ConvertTo-Json -Depth 4
} else {
  foreach ($r in $script:results) {
    Write-Host ($r.status.PadRight(5) + ' ' + $r.check.PadRight(14) + ' ' + $r.message)
    if ($r.fix) { Write-Host ('      fix: ' + $r.fix) }
  }
  if ($failures -gt 0) { Write-Host ([string]$failures + ' check(s) failed') } else { Write-Host 'all checks passed' }
}
if ($failures -gt 0) { exit 1 }
exit 0
)PS";

}  // namespace

std::vector<std::string> first_path_dirs(const WindowsActivation& a) {
  std::vector<std::string> out;
  if (!a.dll_dir.empty()) out.push_back(a.dll_dir);
  for (const auto& d : a.toolkit_bin_dirs)
    if (std::none_of(out.begin(), out.end(), [&](const std::string& o) { return util::to_lower(o) == util::to_lower(d); }))
      out.push_back(d);
  return out;
}

RunHints run_hints(const std::string& script, bool in_session) {
  RunHints h;
  if (in_session)
    h.powershell = "Set-ExecutionPolicy -Scope Process -ExecutionPolicy Bypass; & " + ps_quote(script);
  else
    h.powershell = "powershell -NoProfile -ExecutionPolicy Bypass -File " + ps_quote(script);
  // cmd passes "..." through; it has no escape for a double quote, and %NAME% expands at the prompt
  if (script.find_first_of("\"%") == std::string::npos)
    h.cmd = "powershell -NoProfile -ExecutionPolicy Bypass -File \"" + script + "\"";
  else
    h.cmd = "(from PowerShell: the path holds a character cmd.exe cannot pass on)";
  h.wsl = "powershell.exe -NoProfile -ExecutionPolicy Bypass -File " + sh_quote(script);
  return h;
}

std::string render_activate_ps1(const WindowsActivation& a) {
  std::string s = k_utf8_bom;
  s += "# Generated by stackpin: " + comment_safe(tree_what(a)) + " (" + comment_safe(a.name) + ") at " + comment_safe(a.cudnn_root) + "\n";
  s += "# Puts this tree's DLL directories first on PATH and takes out the entries that are other cuDNN trees.\n";
  s += "#   .\\activate.ps1                   this PowerShell session only\n";
  s += "#   .\\activate.ps1 -Scope Machine    persistently, for every user (administrator)\n";
  s += "#   .\\activate.ps1 -Scope User       persistently for you, but after the machine PATH (see below)\n";
  s += "#   add -WhatIf to see the new PATH and what it takes out, changing nothing\n";
  s += "# Blocked by the execution policy? Set-ExecutionPolicy -Scope Process -ExecutionPolicy Bypass\n";
  s += "[CmdletBinding(SupportsShouldProcess = $true)]\n";
  s += "param([ValidateSet('Process', 'User', 'Machine')][string]$Scope = 'Process')\n";
  s += "$ErrorActionPreference = 'Stop'\n";
  s += "$CudnnRoot = " + ps_quote(a.cudnn_root) + "\n";
  s += "$CudnnBin = " + ps_quote(a.dll_dir) + "\n";
  s += "$CudnnVersion = " + ps_quote(a.cudnn_version) + "\n";
  s += "$CudnnDlls = " + ps_list(a.dlls) + "\n";
  s += "$FirstDirs = " + ps_list(first_path_dirs(a)) + "\n";
  s += "$CudaPath = " + ps_quote(a.cuda_path) + "\n";
  s += "$CudaPathVar = " + ps_quote(a.cuda_version.empty() ? "" : version_var(a.cuda_version)) + "\n";
  s += "$CudnnPatterns = " + ps_list(a.cudnn_patterns) + "\n";
  s += "$ToolkitPatterns = " + ps_list(a.toolkit_patterns) + "\n";
  s += "$PythonLine = " + ps_quote(python_hint(a)) + "\n";
  s += k_path_functions;
  s += k_activate_functions;
  s += k_activate_main;
  return s;
}

std::string render_check_ps1(const WindowsActivation& a) {
  std::string s = k_utf8_bom;
  s += "# Generated by stackpin: checks " + comment_safe(tree_what(a)) + " (" + comment_safe(a.name) + ") at " +
       comment_safe(a.cudnn_root) + "\n";
  s += "# Run it after activate.ps1: in the same PowerShell (the default -Scope Process changes only that session),\n";
  s += "# or in a new one after -Scope Machine. One line per check, then a summary; exits 1 when a check fails.\n";
  s += "#   .\\check-cudnn.ps1                  every check\n";
  s += "#   .\\check-cudnn.ps1 -Process python  also which cuDNN and CUDA runtime DLLs that running process loaded\n";
  s += "#   .\\check-cudnn.ps1 -Quick           without hashing the files; -Json for one JSON document (CI)\n";
  s += "# Blocked by the execution policy? powershell -NoProfile -ExecutionPolicy Bypass -File check-cudnn.ps1\n";
  s += "param([string]$Process = '', [switch]$Json, [switch]$Quick)\n";
  s += "$CudnnRoot = " + ps_quote(a.cudnn_root) + "\n";
  s += "$CudnnBin = " + ps_quote(a.dll_dir) + "\n";
  s += "$Include = " + ps_quote(a.include_dir) + "\n";
  s += "$ImportLib = " + ps_quote(a.import_lib) + "\n";
  s += "$MainDll = " + ps_quote(a.main_dll) + "\n";
  s += "$CudnnDlls = " + ps_list(a.dlls) + "\n";
  s += "$HeaderVersion = " + ps_quote(a.header_version) + "\n";
  s += "$CudaBins = " + ps_list(a.cuda_bin_dirs) + "\n";
  s += std::string("$ToolkitHere = ") + (a.toolkit_bin_dirs.empty() ? "$false" : "$true") + "\n";
  s += "$TreeDirs = " + ps_list(tree_dirs(a)) + "\n";
  s += std::string("$NeedZlib = ") + (a.zlibwapi_needed ? "$true" : "$false") + "\n";
  s += "$Arch = " + ps_quote(a.arch) + "\n";
  s += "$MinDriver = " + ps_quote(a.min_driver) + "\n";
  s += "$CudnnPatterns = " + ps_list(a.cudnn_patterns) + "\n";
  s += "$ToolkitPatterns = " + ps_list(a.toolkit_patterns) + "\n";
  // relative path and SHA-256 of every staged file; each line starts with "f " so that no name can end the here-string
  s += "$FileList = @'\n";
  for (const auto& f : a.files) s += "f " + f.sha256 + " " + comment_safe(f.path) + "\n";
  s += "'@\n";
  s += k_path_functions;
  for (const char* part : {k_check_results, k_check_tree, k_check_version, k_check_path_order, k_check_system_dirs, k_check_cuda_bins,
                           k_check_zlibwapi, k_check_vc_runtime, k_check_driver, k_check_process, k_check_main})
    s += part;
  return s;
}

util::Result<std::string> render_activate_cmd(const WindowsActivation& a) {
  auto dirs = first_path_dirs(a);
  std::string s;
  s += "@echo off\n";
  s += "rem Generated by stackpin: " + comment_safe(tree_what(a)) + " (" + comment_safe(a.name) + ")\n";
  s += "rem Puts this tree's DLL directories first on PATH for this cmd.exe only (no persistent change;\n";
  s += "rem use activate.ps1 -Scope Machine for that). Run it, do not start it: call activate.cmd\n";
  s += "rem The paths below are UTF-8: the code page is 65001 while this runs, then the one it was.\n";
  s += "set \"STACKPIN_CODEPAGE=\"\n";
  // the number after the colon ("Active code page: 437", "Aktive Codepage: 850."); %%~nd drops a trailing dot
  s += "for /f \"tokens=2 delims=:\" %%c in ('chcp') do for %%d in (%%c) do set \"STACKPIN_CODEPAGE=%%~nd\"\n";
  s += "chcp 65001 >nul\n";
  if (!a.cudnn_version.empty()) {
    SP_TRY_ASSIGN(auto root, cmd_quote("CUDNN_PATH=" + a.cudnn_root));
    s += "set " + root + "\n";
  }
  if (!a.cuda_path.empty()) {
    SP_TRY_ASSIGN(auto cuda, cmd_quote("CUDA_PATH=" + a.cuda_path));
    s += "set " + cuda + "\n";
    if (!a.cuda_version.empty()) {
      SP_TRY_ASSIGN(auto var, cmd_quote(version_var(a.cuda_version) + "=" + a.cuda_path));
      s += "set " + var + "\n";
    }
  }
  // last first, so that the first ends up in front
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
    SP_TRY_ASSIGN(auto dir, cmd_quote("STACKPIN_DIR=" + *it));
    s += "set " + dir + "\n";
    // The substitution %VAR:old=new% reads the directory a second time (call): an '=' in it would
    // end the search text, a '%' or '^' be active again, a '!' eaten by delayed expansion. Such a
    // directory is put first without taking its other copies out.
    if (it->find_first_of("%=^!") == std::string::npos) {
      s += "rem remove every existing copy of the entry (case-insensitively), then put it first; each substitution\n";
      s += "rem runs twice, since ;X;X; loses only every other copy in one pass\n";
      s += "set \"STACKPIN_PATH=;%PATH%;\"\n";
      for (int pass = 0; pass < 2; ++pass) {
        s += "call set \"STACKPIN_PATH=%%STACKPIN_PATH:;%STACKPIN_DIR%;=;%%\"\n";
        s += "call set \"STACKPIN_PATH=%%STACKPIN_PATH:;%STACKPIN_DIR%\\;=;%%\"\n";
      }
      s += "set \"PATH=%STACKPIN_DIR%%STACKPIN_PATH:~0,-1%\"\n";
      s += "set \"STACKPIN_PATH=\"\n";
    } else {
      s += "rem the directory holds % = ^ or !, which cmd's substitution cannot search for: it is put first only\n";
      s += "set \"PATH=%STACKPIN_DIR%;%PATH%\"\n";
    }
    s += "echo first on PATH: \"%STACKPIN_DIR%\"\n";
  }
  s += "set \"STACKPIN_DIR=\"\n";
  s += "if defined STACKPIN_CODEPAGE chcp %STACKPIN_CODEPAGE% >nul\n";
  s += "set \"STACKPIN_CODEPAGE=\"\n";
  // CRLF: cmd's parser (labels, goto, line continuations) is only reliable with Windows line ends
  std::string crlf;
  for (char c : s) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  return crlf;
}

}  // namespace gen
