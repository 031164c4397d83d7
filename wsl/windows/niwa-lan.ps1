<#
.SYNOPSIS
    Makes the Niwa engine in WSL2 reachable from the office LAN, or stops that.

.DESCRIPTION
    The Niwa app runs this elevated (one UAC prompt) when LAN serving is turned on or off;
    the app itself never runs elevated. "status" needs no elevation.

    NAT networking (the WSL default): the distro has its own address behind Windows, so
    Windows forwards the port to it (netsh interface portproxy) and an inbound firewall rule
    on the Private profile lets LAN clients in. The distro's address changes when WSL
    restarts: "reapply" points the forward at the current address.
    Mirrored networking: the distro shares Windows' addresses; a Hyper-V firewall rule for
    the WSL VM lets LAN clients in.

    Everything it adds is named "Niwa-Engine-*" (group "Niwa"), so "disable" removes exactly that.
    Writes its result as JSON to -StatusFile; exit code 0 on success, 1 on failure.

.EXAMPLE
    powershell -ExecutionPolicy Bypass -File niwa-lan.ps1 -Action enable -Port 8080 -Distro Ubuntu-24.04
#>
[CmdletBinding()]
param(
    [Parameter(Mandatory = $true)]
    [ValidateSet('enable', 'disable', 'status', 'reapply')]
    [string]$Action,

    [ValidateRange(1, 65535)]
    [int]$Port = 8080,

    # Empty: the default distro.
    [string]$Distro = '',

    # auto: asked from the distro (wslinfo --networking-mode). The app passes it when it runs
    # this as another (administrator) user, whose WSL does not know the distro.
    [ValidateSet('auto', 'nat', 'mirrored')]
    [string]$Mode = 'auto',

    # The distro's IPv4 address (NAT); empty: asked from the distro.
    [string]$Address = '',

    [string]$StatusFile = ''
)

Set-StrictMode -Version 3
$ErrorActionPreference = 'Stop'

$RuleName = "Niwa-Engine-TCP-$Port"
$HyperVRuleName = "Niwa-Engine-HyperV-TCP-$Port"
$DisplayName = "Niwa engine (TCP $Port)"
$RuleGroup = 'Niwa'
# The VM creator id of WSL, as Microsoft documents it for Hyper-V firewall rules.
$WslVmCreatorId = '{40E0AC32-46A5-438A-A0B2-2B479E8F2E90}'

if (-not $StatusFile) {
    $StatusFile = Join-Path $env:LOCALAPPDATA 'Niwa\lan-status.json'
}

function Invoke-InDistro {
    param([string[]]$Command)
    $wslArgs = @()
    if ($Distro) { $wslArgs += @('-d', $Distro) }
    $wslArgs += '--exec'
    $wslArgs += $Command
    # Windows PowerShell turns a native program's stderr into errors, which 'Stop' would throw.
    $ErrorActionPreference = 'Continue'
    $env:WSL_UTF8 = '1'
    $previous = [Console]::OutputEncoding
    [Console]::OutputEncoding = [System.Text.Encoding]::UTF8
    try {
        $out = & wsl.exe @wslArgs 2>&1
        $code = $LASTEXITCODE
    } finally {
        [Console]::OutputEncoding = $previous
    }
    $text = (@($out) | ForEach-Object { "$_" }) -join "`n"
    if ($code -ne 0) {
        throw "wsl.exe $($wslArgs -join ' ') failed (exit code $code): $text"
    }
    return $text.Trim()
}

function Get-NetworkingMode {
    if ($Mode -ne 'auto') { return $Mode }
    try {
        $answer = Invoke-InDistro @('wslinfo', '--networking-mode')
    } catch {
        # wslinfo came with WSL 2.0; an older WSL only has NAT.
        return 'nat'
    }
    if ($answer -match 'mirrored') { return 'mirrored' }
    return 'nat'
}

function Get-DistroAddress {
    if ($Address) { return $Address }
    $all = Invoke-InDistro @('hostname', '-I')
    $first = ($all -split '\s+') | Where-Object { $_ -match '^\d+\.\d+\.\d+\.\d+$' } | Select-Object -First 1
    if (-not $first) { throw "the distro reported no IPv4 address (hostname -I: '$all')" }
    return $first
}

# The v4tov4 forward of our port: @{ Listen = ...; Connect = ... } or $null.
function Get-PortProxy {
    $lines = & netsh.exe interface portproxy show v4tov4
    foreach ($line in @($lines)) {
        $fields = "$line".Trim() -split '\s+'
        if ($fields.Count -eq 4 -and $fields[1] -eq "$Port" -and $fields[3] -eq "$Port") {
            return @{ Listen = "$($fields[0]):$($fields[1])"; Connect = $fields[2] }
        }
    }
    return $null
}

function Test-HyperVFirewall {
    return [bool](Get-Command -Name 'New-NetFirewallHyperVRule' -ErrorAction SilentlyContinue)
}

function Test-FirewallRule {
    return [bool](Get-NetFirewallRule -Name $RuleName -ErrorAction SilentlyContinue)
}

function Test-HyperVRule {
    if (-not (Test-HyperVFirewall)) { return $false }
    return [bool](Get-NetFirewallHyperVRule -Name $HyperVRuleName -ErrorAction SilentlyContinue)
}

function Invoke-Netsh {
    param([string[]]$Arguments)
    $ErrorActionPreference = 'Continue'
    $out = & netsh.exe @Arguments 2>&1
    if ($LASTEXITCODE -ne 0) {
        throw "netsh $($Arguments -join ' ') failed: $((@($out) | ForEach-Object { "$_" }) -join ' ')"
    }
}

function Remove-All {
    if (Get-PortProxy) {
        Invoke-Netsh @('interface', 'portproxy', 'delete', 'v4tov4', "listenport=$Port", 'listenaddress=0.0.0.0')
    }
    Remove-NetFirewallRule -Name $RuleName -ErrorAction SilentlyContinue
    if (Test-HyperVFirewall) {
        Remove-NetFirewallHyperVRule -Name $HyperVRuleName -ErrorAction SilentlyContinue
    }
}

function Set-PortProxy {
    param([string]$To)
    # portproxy needs the IP Helper service.
    $helper = Get-Service -Name iphlpsvc
    if ($helper.Status -ne 'Running') { Start-Service -Name iphlpsvc }
    if (Get-PortProxy) {
        Invoke-Netsh @('interface', 'portproxy', 'delete', 'v4tov4', "listenport=$Port", 'listenaddress=0.0.0.0')
    }
    Invoke-Netsh @('interface', 'portproxy', 'add', 'v4tov4', "listenport=$Port", 'listenaddress=0.0.0.0',
        "connectport=$Port", "connectaddress=$To")
}

function Enable-Nat {
    $to = Get-DistroAddress
    Set-PortProxy -To $to
    New-NetFirewallRule -Name $RuleName -DisplayName $DisplayName -Group $RuleGroup -Direction Inbound `
        -Action Allow -Protocol TCP -LocalPort $Port -Profile Private | Out-Null
}

function Enable-Mirrored {
    if (-not (Test-HyperVFirewall)) {
        throw 'mirrored networking needs the Hyper-V firewall (Windows 11 22H2 or later)'
    }
    New-NetFirewallHyperVRule -Name $HyperVRuleName -DisplayName $DisplayName -Direction Inbound `
        -VMCreatorId $WslVmCreatorId -Protocol TCP -LocalPorts $Port -Action Allow | Out-Null
}

function Get-LanAddresses {
    $addresses = Get-NetIPAddress -AddressFamily IPv4 -ErrorAction SilentlyContinue |
        Where-Object { $_.IPAddress -notlike '127.*' -and $_.IPAddress -notlike '169.254.*' -and
            $_.InterfaceAlias -notlike 'vEthernet*' }
    return @($addresses | ForEach-Object { $_.IPAddress })
}

function Get-NetworkCategories {
    $profiles = Get-NetConnectionProfile -ErrorAction SilentlyContinue
    return @($profiles | ForEach-Object { @{ interface = "$($_.InterfaceAlias)"; category = "$($_.NetworkCategory)" } })
}

function Get-Status {
    $networking = Get-NetworkingMode
    $proxy = Get-PortProxy
    $current = $null
    if ($networking -eq 'nat') {
        try { $current = Get-DistroAddress } catch { $current = $null }
    }
    $firewall = Test-FirewallRule
    $hyperV = Test-HyperVRule
    $enabled = if ($networking -eq 'nat') { [bool]($proxy -and $firewall) } else { $hyperV }
    return [ordered]@{
        mode = $networking
        port = $Port
        distro = $Distro
        address = $current
        portproxy = if ($proxy) { [ordered]@{ listen = $proxy.Listen; connect = $proxy.Connect } } else { $null }
        firewallRule = $firewall
        hyperVRule = $hyperV
        enabled = $enabled
        needsReapply = [bool]($networking -eq 'nat' -and $proxy -and $current -and $proxy.Connect -ne $current)
        lanAddresses = Get-LanAddresses
        networks = Get-NetworkCategories
    }
}

function Write-Status {
    param([System.Collections.IDictionary]$Result)
    $folder = Split-Path -Parent $StatusFile
    if ($folder -and -not (Test-Path $folder)) { New-Item -ItemType Directory -Path $folder -Force | Out-Null }
    $json = $Result | ConvertTo-Json -Depth 5
    [System.IO.File]::WriteAllText($StatusFile, $json, (New-Object System.Text.UTF8Encoding $false))
    Write-Output $json
}

$result = [ordered]@{ action = $Action; ok = $true; error = $null; time = (Get-Date).ToUniversalTime().ToString('o') }
$exitCode = 0
try {
    switch ($Action) {
        'enable' {
            $networking = Get-NetworkingMode
            Remove-All
            if ($networking -eq 'mirrored') { Enable-Mirrored } else { Enable-Nat }
        }
        'disable' { Remove-All }
        'reapply' {
            $proxy = Get-PortProxy
            if ((Get-NetworkingMode) -eq 'nat' -and $proxy) {
                $to = Get-DistroAddress
                if ($proxy.Connect -ne $to) { Set-PortProxy -To $to }
            }
        }
        'status' { }
    }
    $result.status = Get-Status
} catch {
    $result.ok = $false
    $result.error = "$($_.Exception.Message)"
    $exitCode = 1
}
Write-Status -Result $result
exit $exitCode
