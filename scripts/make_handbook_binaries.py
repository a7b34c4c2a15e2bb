"""Generate the PDF and DOCX documents of the sample handbook (examples/handbook).

The binaries are committed next to this script; rerun it after editing the texts below:

    python scripts/make_handbook_binaries.py

Output is deterministic: PDFs are written with reportlab's ``invariant`` mode and DOCX
files get fixed core properties and fixed zip timestamps, so a rerun without text
changes produces byte-identical files.
"""

from __future__ import annotations

import io
import zipfile
from datetime import datetime
from pathlib import Path
from xml.sax.saxutils import escape

from docx import Document
from docx.enum.text import WD_ALIGN_PARAGRAPH
from docx.shared import Pt, RGBColor
from reportlab import rl_config
from reportlab.lib import colors
from reportlab.lib.enums import TA_LEFT
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.platypus import (
    BaseDocTemplate,
    CondPageBreak,
    Frame,
    KeepTogether,
    ListFlowable,
    ListItem,
    PageBreak,
    PageTemplate,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
    Table,
    TableStyle,
)

rl_config.invariant = 1

ROOT = Path(__file__).resolve().parent.parent / "examples" / "handbook"
FIXED_TIME = datetime(2026, 1, 1, 9, 0, 0)
ZIP_TIME = (2026, 1, 1, 9, 0, 0)

# --------------------------------------------------------------------------------------
# Document content. Each document is a list of blocks:
#   ("h1"|"h2"|"h3", text) headings, ("p", text) paragraph, ("ul", [items]) bullets,
#   ("ol", [items]) numbered list, ("table", [header, *rows]) table, ("page",) page break.
# --------------------------------------------------------------------------------------

SALARY_BANDS = [
    ("h1", "Salary Bands 2026"),
    (
        "p",
        "Northwind Cloud GmbH · People Operations · Strictly confidential – HR only · valid from 1 February 2026",
    ),
    ("h2", "1. Purpose of the salary bands"),
    (
        "p",
        "Salary bands make pay at Northwind consistent and explainable. Every role is mapped to a level "
        "from L1 to L7, and every level has a salary range (minimum, midpoint, maximum) per job family. "
        "Offers, promotions and the annual salary review are always set within the band of the level.",
    ),
    ("h2", "2. How to read the bands"),
    (
        "ul",
        [
            "All amounts are gross annual base salaries in EUR for a full-time (40-hour) contract in Berlin.",
            "Variable pay (sales commission, on-call allowances) is not included in the base salary ranges.",
            "Part-time salaries are calculated pro rata from the full-time amount.",
            "For locations outside Berlin the location factor on page 4 is applied to the whole band.",
        ],
    ),
    ("h2", "3. Changes for 2026"),
    (
        "ul",
        [
            "All bands were raised by 3.5% compared with 2025, effective 1 January 2026.",
            "Support bands L1–L3 were raised by an additional 2% after the 2025 market benchmark.",
            "A new level L7 (Distinguished Engineer) was introduced for the engineering job family.",
        ],
    ),
    ("h2", "4. Band positioning"),
    (
        "p",
        "We describe a salary's position in the band with the compa-ratio (salary divided by the midpoint). "
        "New hires who meet the level's expectations are usually offered between 0.90 and 1.00. "
        "A compa-ratio above 1.10 should only occur for consistently strong performers with long tenure in the level.",
    ),
    ("h2", "5. Confidentiality"),
    (
        "p",
        "This document is strictly confidential and available to People Operations only. Managers receive the "
        "band for a specific role from their HR business partner when they make an offer or prepare a promotion. "
        "Employees may ask People Operations for the band of their own level at any time.",
    ),
    ("page",),
    ("h2", "6. Engineering and Product bands"),
    ("h3", "6.1 Engineering"),
    (
        "table",
        [
            ["Level", "Title", "Range (EUR)", "Midpoint (EUR)"],
            ["L1", "Associate Engineer", "42,000 – 52,000 EUR", "47,000"],
            ["L2", "Engineer", "52,000 – 64,000 EUR", "58,000"],
            ["L3", "Engineer II", "64,000 – 78,000 EUR", "71,000"],
            ["L4", "Senior Engineer", "78,000 – 96,000 EUR", "87,000"],
            ["L5", "Staff Engineer", "96,000 – 118,000 EUR", "107,000"],
            ["L6", "Principal Engineer", "118,000 – 140,000 EUR", "129,000"],
            ["L7", "Distinguished Engineer", "140,000 – 170,000 EUR", "155,000"],
        ],
    ),
    (
        "p",
        "Engineering managers use the same bands as individual contributors of the same level "
        "(Engineering Manager = L5, Senior Engineering Manager = L6, CTO is outside the band system).",
    ),
    ("h3", "6.2 Product Management and Design"),
    (
        "table",
        [
            ["Level", "Title", "Range (EUR)", "Midpoint (EUR)"],
            ["L3", "Product Manager / Product Designer", "66,000 – 80,000 EUR", "73,000"],
            ["L4", "Senior Product Manager / Senior Designer", "80,000 – 98,000 EUR", "89,000"],
            ["L5", "Group Product Manager / Design Lead", "98,000 – 120,000 EUR", "109,000"],
            ["L6", "Director of Product", "120,000 – 145,000 EUR", "132,500"],
        ],
    ),
    ("h3", "6.3 Notes for Engineering and Product"),
    (
        "ul",
        [
            "On-call allowances (250 EUR per week as primary) are paid on top of the band.",
            "Promotion from L3 to L4 is the most common step; the new salary must be at least the L4 minimum.",
            "Hiring above the L5 midpoint needs approval from the CTO in addition to the Head of People.",
        ],
    ),
    ("page",),
    ("h2", "7. Go-to-market and operations bands"),
    ("h3", "7.1 Customer Support"),
    (
        "table",
        [
            ["Level", "Title", "Range (EUR)", "Midpoint (EUR)"],
            ["L1", "Support Agent", "36,000 – 44,000 EUR", "40,000"],
            ["L2", "Support Specialist", "44,000 – 54,000 EUR", "49,000"],
            ["L3", "Senior Support Specialist", "54,000 – 66,000 EUR", "60,000"],
            ["L4", "Support Team Lead", "66,000 – 80,000 EUR", "73,000"],
            ["L5", "Support Manager", "80,000 – 98,000 EUR", "89,000"],
            ["L6", "Head of Support", "98,000 – 125,000 EUR", "111,500"],
        ],
    ),
    ("h3", "7.2 Sales (base salary)"),
    (
        "table",
        [
            ["Level", "Title", "Base range (EUR)", "Variable split"],
            ["L2", "Sales Development Representative", "40,000 – 48,000 EUR", "70 / 30"],
            ["L3", "Account Executive", "55,000 – 68,000 EUR", "60 / 40"],
            ["L4", "Senior Account Executive", "68,000 – 84,000 EUR", "60 / 40"],
            ["L5", "Sales Manager", "84,000 – 104,000 EUR", "70 / 30"],
            ["L6", "VP Sales", "115,000 – 145,000 EUR", "70 / 30"],
        ],
    ),
    ("h3", "7.3 Finance and People Operations"),
    (
        "table",
        [
            ["Level", "Title", "Range (EUR)", "Midpoint (EUR)"],
            ["L2", "Accountant / People Operations Specialist", "46,000 – 56,000 EUR", "51,000"],
            ["L3", "Senior Accountant / HR Business Partner", "56,000 – 70,000 EUR", "63,000"],
            [
                "L4",
                "Finance Operations Lead / Senior HR Business Partner",
                "70,000 – 86,000 EUR",
                "78,000",
            ],
            ["L5", "Head of Finance Operations / Head of People", "86,000 – 110,000 EUR", "98,000"],
        ],
    ),
    ("h3", "7.4 Department notes"),
    (
        "ul",
        [
            "Sales: the variable split is base / variable at 100% target attainment (on-target earnings). "
            "Commission plans are defined per fiscal year by the VP Sales and Finance.",
            "Support: shift allowances for weekend and public-holiday duty are paid on top of the band.",
            "Finance and People: the CFO and the Head of People themselves are outside the band system.",
        ],
    ),
    ("page",),
    ("h2", "8. Location factors"),
    (
        "p",
        "Bands are defined for Berlin. For other locations the whole band is multiplied by the location factor:",
    ),
    (
        "table",
        [
            ["Location", "Factor", "Payroll currency"],
            ["Berlin and remote Germany", "1.00", "EUR"],
            ["Remote EU – Netherlands, Ireland", "1.00", "EUR"],
            ["Remote EU – Portugal, Spain", "0.80", "EUR"],
            ["Remote EU – Poland", "0.70", "PLN (fixed planning rate)"],
            ["Kyiv office", "0.55", "UAH, reviewed twice a year"],
            ["Shanghai office", "0.70", "CNY at the 2026 planning rate of 7.8 CNY per EUR"],
        ],
    ),
    (
        "p",
        "Example: an L4 Senior Engineer in Kyiv has a band of 78,000 × 0.55 = 42,900 EUR to 96,000 × 0.55 = 52,800 EUR, "
        "paid in UAH.",
    ),
    ("h2", "9. Approvals and exceptions"),
    (
        "table",
        [
            ["Situation", "Approval needed"],
            [
                "Offer or raise within the band, up to the midpoint",
                "Hiring manager and HR business partner",
            ],
            ["Offer or raise above the midpoint", "Head of People"],
            ["Offer or raise above the band maximum (max. 10% above)", "Head of People and CFO"],
        ],
    ),
    ("h2", "10. Review calendar"),
    (
        "ul",
        [
            "Bands are reviewed every January against market data from two salary surveys.",
            "Individual salary changes happen in the April and October review cycles (see the Performance Review Guide).",
            "Questions about this document: Alice Moreau, Head of People (alice@northwind.example).",
        ],
    ),
]

CONTRACTOR_EXPENSES = [
    ("h1", "Expense Policy for Contractors"),
    ("p", "Northwind Cloud GmbH · Finance · Version 1.3 · valid from 10 April 2026"),
    ("h2", "1. Scope and principles"),
    ("h3", "1.1 Who this policy applies to"),
    (
        "p",
        "This policy applies to independent contractors, freelancers and agency staff who provide services to "
        "Northwind Cloud under a service agreement or statement of work (together: contractors). It does not "
        "apply to employees; employees follow the Expense Policy for Employees.",
    ),
    ("h3", "1.2 The core rule: pre-approval"),
    (
        "p",
        "Contractors are reimbursed only for pre-approved expenses. An expense is pre-approved when the engaging "
        "manager has approved a Contractor Expense Pre-Approval request in SpendWise (guest access) before the "
        "cost is incurred. Each approval receives a number in the format PA-2026-0000. Expenses without a "
        "pre-approval are never reimbursed, regardless of the amount.",
    ),
    (
        "ul",
        [
            "Pre-approval requests up to 1,000 EUR are approved by the engaging manager alone.",
            "Requests above 1,000 EUR are approved by the engaging manager and then by Finance.",
            "A pre-approval is valid for 60 days and only for the purpose and the maximum amount stated.",
            "Expenses that are already covered by the fee in the statement of work are not reimbursed separately.",
        ],
    ),
    ("h3", "1.3 General principles"),
    (
        "ul",
        [
            "Expenses must be necessary to deliver the contracted services and reasonably priced.",
            "Contractors carry their own business costs (equipment, software, insurance, office).",
            "Every expense needs an itemised receipt in the contractor's or Northwind's name.",
        ],
    ),
    ("page",),
    ("h2", "2. Travel"),
    ("h3", "2.1 Booking"),
    (
        "p",
        "Travel for contractors is booked exclusively through the travel agency TravelNest, by the engaging manager "
        "or the Travel Desk, after the trip has been pre-approved. Contractors must not book flights, trains or "
        "hotels themselves. Self-booked travel is not reimbursed.",
    ),
    ("h3", "2.2 Class of travel and hotels"),
    (
        "ul",
        [
            "Flights: economy class on all flights, regardless of the flight duration.",
            "Rail: 2nd class.",
            "Hotels: within the per-city caps of the Business Travel Policy (for example Berlin 150 EUR, London 220 EUR per night).",
            "Rental cars only if pre-approved and booked through TravelNest.",
        ],
    ),
    ("h3", "2.3 Meals and daily costs – no per diem"),
    (
        "p",
        "Contractors do not receive a per diem or any other daily allowance. During pre-approved travel, meals are "
        "reimbursed at actual cost up to 40 EUR per travel day, against itemised receipts. Alcohol is not "
        "reimbursed. Meals on days without pre-approved travel are not reimbursed.",
    ),
    ("h3", "2.4 Local transport and travel time"),
    (
        "ul",
        [
            "Public transport at the destination is reimbursable with receipts.",
            "Taxis are reimbursable only for airport transfers or after 22:00, up to 60 EUR per ride.",
            "Travel time is billable only if the statement of work says so.",
            "Commuting to a Northwind office in the contractor's home city is not business travel.",
        ],
    ),
    ("page",),
    ("h2", "3. Invoicing and reimbursement"),
    ("h3", "3.1 Monthly invoice"),
    (
        "p",
        "Contractors invoice monthly, by the 5th working day of the following month. Reimbursable expenses are "
        "included in the same monthly invoice as separate line items, with the expense report attached. "
        "Separate expense-only invoices are not accepted.",
    ),
    ("h3", "3.2 What the expense report must contain"),
    (
        "ul",
        [
            "The SpendWise expense report exported as PDF.",
            "The pre-approval number (PA-2026-…) for every expense.",
            "Itemised receipts for every line, in the original currency.",
            "The purchase order (PO) number of the engagement.",
        ],
    ),
    ("h3", "3.3 Deadlines"),
    (
        "p",
        "Expenses must be invoiced within 60 days of the date they were incurred. Expenses invoiced later than "
        "60 days are not reimbursed. Invoices go to ap@northwind.example; Accounts Payable pays correct invoices "
        "within 30 days of receipt.",
    ),
    ("h3", "3.4 Currency and VAT"),
    (
        "ul",
        [
            "Invoices are issued in EUR. Foreign-currency expenses are converted at the ECB reference rate of the expense date.",
            "VAT is shown separately. Contractors based in another EU country invoice under the reverse-charge procedure.",
            "Expenses are reimbursed at the net amount if the contractor can reclaim input VAT.",
        ],
    ),
    ("page",),
    ("h2", "4. Not reimbursable"),
    (
        "p",
        "The following costs are never reimbursed to contractors, even if they are related to Northwind work:",
    ),
    (
        "ul",
        [
            "Per diems and daily allowances of any kind.",
            "Own laptops, phones, monitors and other hardware; software licences and subscriptions.",
            "Phone and internet costs, coworking space, office rent.",
            "Training courses, certifications and conference tickets, unless explicitly pre-approved as part of a project.",
            "Professional liability insurance and other insurance.",
            "Client entertainment, unless pre-approved in writing for a specific event.",
            "Alcohol, fines, parking tickets, seat or cabin upgrades, minibar.",
        ],
    ),
    ("h2", "5. Equipment provided by Northwind"),
    (
        "p",
        "If security requirements make a Northwind-managed device necessary (for example for access to customer data), "
        "IT lends the contractor a laptop for the duration of the engagement. VPN access is set up on request of "
        "the engaging manager and ends with the contract. Loaned equipment must be returned within 5 working days "
        "after the end of the engagement; unreturned equipment is deducted from the final invoice.",
    ),
    ("page",),
    ("h2", "6. Roles and contacts"),
    ("h3", "6.1 Engaging manager"),
    (
        "ul",
        [
            "Approves or rejects pre-approval requests in SpendWise, normally within 3 working days.",
            "Books the contractor's travel through TravelNest.",
            "Confirms the services and expenses on the monthly invoice before it goes to Accounts Payable.",
        ],
    ),
    ("h3", "6.2 Finance"),
    (
        "ul",
        [
            "Second approval for pre-approvals above 1,000 EUR.",
            "Checks invoices against pre-approvals and receipts.",
            "Questions: finance-ops@northwind.example or Carol Jensen, Finance Operations Lead.",
        ],
    ),
    ("h2", "7. Examples"),
    (
        "ol",
        [
            "A contractor runs a two-day workshop in Berlin. The manager pre-approves train travel and two hotel nights "
            "(PA-2026-0142) and books them through TravelNest. The contractor adds dinner receipts of 32 EUR and 38 EUR "
            "to the monthly invoice with the SpendWise report attached. Reimbursed: 70 EUR.",
            "A contractor books a flight to London on their own because it was cheaper. Not reimbursed: travel must be "
            "booked through TravelNest by the engaging manager.",
            "A contractor invoices pre-approved hotel costs from February on the invoice sent in late May (more than 60 days "
            "later). Not reimbursed.",
            "A contractor asks for the employee per diem of 66 EUR for a day in London. Not possible: contractors receive "
            "no per diem; meals are reimbursed at cost up to 40 EUR per travel day.",
        ],
    ),
]

PERFORMANCE_REVIEW = [
    ("h1", "Performance Review Guide for Managers"),
    ("p", "Northwind Cloud · People Operations · For people managers only · Version 2026.1"),
    ("h2", "1. The review cycle"),
    (
        "p",
        "Northwind runs performance reviews twice a year, in April and in October. Every employee who has been with "
        "Northwind for at least 3 months at the start of a cycle takes part. Reviews are done in PeoplePort under "
        "Performance.",
    ),
    ("h3", "1.1 April cycle"),
    (
        "table",
        [
            ["Step", "Dates"],
            ["Self-assessment by the employee", "1–10 April"],
            ["Manager assessment and proposed rating", "11–20 April"],
            ["Calibration meetings", "21–30 April"],
            ["Feedback conversations", "by 15 May"],
            ["Salary changes and promotions effective", "1 July"],
        ],
    ),
    ("h3", "1.2 October cycle"),
    (
        "table",
        [
            ["Step", "Dates"],
            ["Self-assessment by the employee", "1–10 October"],
            ["Manager assessment and proposed rating", "11–20 October"],
            ["Calibration meetings", "21–31 October"],
            ["Feedback conversations", "by 15 November"],
            ["Salary changes and promotions effective", "1 January"],
        ],
    ),
    ("h3", "1.3 What managers prepare"),
    (
        "ul",
        [
            "Review the goals set in the previous cycle and collect evidence (delivered work, peer feedback, customer feedback).",
            "Ask 2 to 4 peers for written feedback in PeoplePort by the 8th of the review month.",
            "Write the assessment against the level expectations of the employee's current level, not the next one.",
        ],
    ),
    ("page",),
    ("h2", "2. Rating scale"),
    ("p", "Every employee receives one overall rating on a scale from 1 to 5:"),
    (
        "table",
        [
            ["Rating", "Label", "Meaning"],
            ["5", "Outstanding", "Consistently far above the level; impact beyond the team"],
            ["4", "Exceeds expectations", "Regularly above the level expectations"],
            [
                "3",
                "Meets expectations",
                "Fully meets the expectations of the level; a good, solid result",
            ],
            ["2", "Partially meets expectations", "Meets some expectations; clear gaps to work on"],
            ["1", "Does not meet expectations", "Significant gaps; immediate action needed"],
        ],
    ),
    ("h3", "2.1 Expected distribution"),
    (
        "p",
        "There is no forced distribution, but across a department we typically see about 5–10% at 5, 20–25% at 4, "
        "55–60% at 3 and about 10% at 1 or 2. Large deviations are discussed in calibration.",
    ),
    ("h3", "2.2 Consequences of low ratings"),
    (
        "ul",
        [
            "Rating 2: a written development plan with clear goals, reviewed monthly until the next cycle.",
            "Rating 1: a performance improvement plan (PIP) of 60 days, set up with the HR business partner.",
            "Employees rated 1 or 2 are not eligible for a merit increase in that cycle.",
        ],
    ),
    ("page",),
    ("h2", "3. Calibration meetings"),
    (
        "p",
        "Calibration makes ratings fair and comparable across teams. Proposed ratings are not final and must not "
        "be shared with employees before calibration is complete.",
    ),
    ("h3", "3.1 Who takes part"),
    (
        "ul",
        [
            "All people managers of a department; the department head chairs the meeting.",
            "The HR business partner facilitates, keeps time and records decisions.",
            "Plan about 90 minutes per 25 employees.",
        ],
    ),
    ("h3", "3.2 How the meeting works"),
    (
        "ol",
        [
            "The HR business partner shows the distribution of proposed ratings for the department.",
            "Managers present every proposed 1, 2 and 5, and every promotion case, with evidence.",
            "The group compares similar roles across teams and adjusts ratings where the evidence does not support them.",
            "The bias checklist is read out before the discussion (recency, similarity, halo, central tendency).",
            "Every change is recorded with a reason in PeoplePort.",
        ],
    ),
    ("h3", "3.3 After calibration"),
    (
        "p",
        "People Operations locks the final ratings in PeoplePort. Managers then hold the feedback conversations; "
        "the employee sees the written assessment and the final rating in PeoplePort after the conversation.",
    ),
    ("page",),
    ("h2", "4. Promotion criteria"),
    (
        "p",
        "Promotions are decided in the April and October cycles only. A promotion case is considered when all of "
        "the following criteria are met:",
    ),
    (
        "ol",
        [
            "At least 12 months in the current level (exceptions need the department head and the Head of People).",
            "A rating of 4 or 5 in the two most recent review cycles.",
            "Evidence of working at the scope of the next level for at least 6 months, described in the written "
            "promotion case using the level expectations.",
            "Support from the department head and confirmation in the calibration meeting.",
        ],
    ),
    ("h3", "4.1 Promotion increase"),
    (
        "p",
        "A promotion comes with a salary increase of 8–12%. The new salary must be at least the minimum of the new "
        "level's band; the HR business partner checks this against the salary bands.",
    ),
    ("h3", "4.2 Writing the promotion case"),
    (
        "ul",
        [
            "Maximum two pages, submitted in PeoplePort by the last day of the manager-assessment window.",
            "Include two or three concrete examples with impact, plus peer feedback.",
            "State what the employee will own at the new level.",
        ],
    ),
    ("h3", "4.3 If the promotion is not approved"),
    (
        "p",
        "Give clear feedback on which criteria were not met and agree a development plan. The case can be submitted "
        "again in the next cycle.",
    ),
]

BENEFITS = [
    ("h1", "Benefits Overview 2026"),
    (
        "p",
        "People Operations · for employees of Northwind Cloud GmbH · last updated 3 November 2025",
    ),
    (
        "p",
        "This overview summarises the benefits Northwind offers on top of salary. Benefits start on your first "
        "working day unless stated otherwise. Employees in Kyiv and Shanghai have local benefit packages; "
        "see section 7. Contractors are not eligible for these benefits.",
    ),
    ("h2", "1. Health"),
    ("h3", "1.1 Health insurance"),
    (
        "p",
        "In Germany you are insured with the statutory health insurance fund of your choice, and Northwind pays "
        "the employer share. In addition, Northwind pays for a supplementary private health insurance with our "
        "provider HanseMed for every employee. It covers:",
    ),
    (
        "ul",
        [
            "Single or double room and treatment by the senior physician during hospital stays.",
            "Naturopathic treatment up to 500 EUR per year.",
            "Glasses and contact lenses up to 300 EUR every 2 years.",
        ],
    ),
    (
        "p",
        "You are registered automatically in your first month. Family members can be added at a group rate "
        "paid by you.",
    ),
    ("h3", "1.2 Dental"),
    (
        "p",
        "The HanseMed dental plan is also paid by Northwind. It covers 90% of the costs of dentures, crowns and "
        "implants up to 1,500 EUR per year, and two professional teeth cleanings per year in full.",
    ),
    ("h3", "1.3 Mental health"),
    (
        "p",
        "Through our partner OpenMind, every employee can use 6 free counselling sessions per year, by video or "
        "in person, in English, German, Ukrainian or Mandarin. Northwind does not learn who uses the service.",
    ),
    ("h2", "2. Fitness and mobility"),
    ("h3", "2.1 Gym allowance"),
    (
        "p",
        "Northwind contributes 40 EUR per month to any gym or sports membership (fitness studio, climbing, "
        "swimming, sports club). Upload your membership confirmation once in SpendWise under the category "
        '"Gym allowance"; the allowance is then paid monthly with your salary.',
    ),
    ("h3", "2.2 Bike leasing"),
    (
        "p",
        "You can lease up to two bikes or e-bikes through our partner LeaseCycle by salary conversion:",
    ),
    (
        "ul",
        [
            "Bike value up to 7,000 EUR each, term of 36 months.",
            "Northwind pays the insurance and the yearly service.",
            "At the end of the term LeaseCycle offers to sell you the bike at its residual value.",
            "Order in the LeaseCycle portal with the company code NW-BIKE; approval by People Operations within 2 working days.",
        ],
    ),
    ("h3", "2.3 Public transport"),
    (
        "p",
        "Northwind pays the full price of the Deutschlandticket as a job ticket for every employee in Germany. "
        "Order it in PeoplePort under Benefits.",
    ),
    ("h2", "3. Learning and development"),
    (
        "p",
        "Every employee has a personal learning budget of 1,000 EUR per calendar year for courses, conferences, "
        "books and certifications, plus 3 paid learning days per year.",
    ),
    (
        "ul",
        [
            "Request learning expenses in PeoplePort under Learning; your manager approves.",
            "Unused budget does not carry over to the next year.",
            "Certifications above 1,000 EUR can be approved by your department head; a repayment agreement applies if "
            "you leave within 12 months.",
            "Language courses (German, English) are paid in addition to the learning budget.",
        ],
    ),
    ("h2", "4. Pension and financial benefits"),
    ("h3", "4.1 Company pension"),
    (
        "p",
        "You can convert part of your gross salary into a company pension (bAV) with our pension provider "
        "Vorsorgewerk Nord. Northwind adds 20% on top of the amount you convert, up to 150 EUR per month "
        "employer contribution. Enrol in PeoplePort; changes are possible once per quarter.",
    ),
    ("h3", "4.2 Childcare subsidy"),
    (
        "p",
        "For children who do not yet attend school, Northwind reimburses kindergarten or daycare fees up to "
        "200 EUR per month per child, tax-free.",
    ),
    ("h3", "4.3 Employee discounts"),
    (
        "p",
        "Through the Corporate Benefits portal you get discounts with more than 1,500 brands, for example "
        "electronics, travel and fashion.",
    ),
    ("h2", "5. Time off and family"),
    (
        "p",
        "Vacation (25 days), sick leave, parental leave and special leave are described in the Leave Policy 2026.",
    ),
    ("h2", "6. Equipment and working from home"),
    (
        "ul",
        [
            "Choice of laptop (MacBook Pro or ThinkPad), two monitors, headset; replaced every 3 years.",
            "Home office equipment: up to 300 EUR once every 3 years, see the Expense Policy for Employees.",
        ],
    ),
    ("h2", "7. Kyiv and Shanghai"),
    (
        "table",
        [
            ["Benefit", "Kyiv", "Shanghai"],
            [
                "Health insurance",
                "Private medical insurance (DMS) with MedPolis Ukraine, incl. dental",
                "Supplementary commercial medical insurance with Huaxia Health",
            ],
            ["Gym allowance", "40 EUR per month (paid in UAH)", "40 EUR per month (paid in CNY)"],
            ["Learning budget", "1,000 EUR per year", "1,000 EUR per year"],
            ["Pension", "Statutory only", "Statutory social insurance and housing fund"],
            ["Other", "Power backup subsidy (see Kyiv office guide)", "Annual health check"],
        ],
    ),
    ("h2", "8. Questions"),
    (
        "p",
        "Contact People Operations at people@northwind.example or in #ask-people. Benefits are reviewed every "
        "November for the following year.",
    ),
]

VPN_SETUP = [
    ("h1", "VPN Setup Guide (WireGuard)"),
    ("p", "IT Services · applies to all company laptops · last updated 2 March 2026"),
    ("h2", "1. When you need the VPN"),
    (
        "p",
        "Most Northwind tools (email, Slack, PeoplePort, SpendWise, Northwind Desk) work without VPN through single "
        "sign-on. You need the VPN for internal systems only:",
    ),
    (
        "ul",
        [
            "Staging and production admin consoles, Grafana dashboards and the internal wiki (*.int.northwind.example).",
            "The internal Git server and build system.",
            "The Finance file share.",
        ],
    ),
    ("h2", "2. What you need"),
    (
        "ul",
        [
            "A company laptop enrolled in device management (Intune), with disk encryption switched on.",
            "The Northwind WireGuard client, version 1.4 or later.",
            "Your SSO account with multi-factor authentication.",
        ],
    ),
    ("h2", "3. Installing the client"),
    ("h3", "3.1 Windows"),
    (
        "p",
        'Open Company Portal, search for "Northwind WireGuard" and click Install. The client starts automatically '
        "and appears in the system tray.",
    ),
    ("h3", "3.2 macOS"),
    (
        "p",
        'Open the Self Service app, choose "Northwind WireGuard" and click Install. Allow the VPN configuration '
        "when macOS asks.",
    ),
    ("h3", "3.3 Linux"),
    (
        "p",
        "Install wireguard-tools with your package manager (for example sudo apt install wireguard-tools), download "
        "your personal configuration file nw0.conf from the self-service portal and start the tunnel with "
        "sudo wg-quick up nw0.",
    ),
    ("h2", "4. Configuration"),
    (
        "table",
        [
            ["Setting", "Value"],
            ["Server (endpoint)", "vpn.northwind.example"],
            ["Port", "51820/UDP"],
            ["Fallback endpoint", "vpn-alt.northwind.example:443 (UDP)"],
            ["DNS server", "10.20.0.53"],
            ["Routed networks (split tunnel)", "10.20.0.0/16"],
            ["Configuration portal", "https://selfservice.northwind.example/vpn"],
        ],
    ),
    (
        "p",
        "Windows and macOS clients receive the configuration automatically. Your device key is rotated every 90 days; "
        "the client does this for you. On Linux, download a new configuration when the portal reminds you.",
    ),
    ("h2", "5. Connecting"),
    (
        "ol",
        [
            "Click Connect in the WireGuard client.",
            "Sign in with SSO in the browser window that opens and approve the MFA prompt.",
            "The tray icon turns green. With client version 1.4 or later, the session lasts 12 hours and is renewed "
            "silently while you are working.",
        ],
    ),
    ("h2", "6. Troubleshooting"),
    ("h3", "6.1 The VPN drops every hour"),
    (
        "p",
        "Clients older than version 1.4 cannot renew the session token in the background, so the connection drops "
        "after 60 minutes. To fix it:",
    ),
    (
        "ol",
        [
            "Re-authenticate: click Disconnect, then Connect, and sign in with SSO again. This restores the connection "
            "for the next hour.",
            "Update the client to 1.4: on Windows open Company Portal, on macOS Self Service, and install the update "
            '"Northwind WireGuard 1.4". On Linux install the latest configuration from the portal.',
            "Check the version under Help → About. After the update, hourly drops should stop.",
        ],
    ),
    ("h3", "6.2 Connected, but internal addresses don't work"),
    (
        "p",
        "Usually a DNS problem. Check that the DNS server 10.20.0.53 is set for the tunnel, for example with "
        "nslookup wiki.int.northwind.example 10.20.0.53. Disconnect and connect again to reapply the settings.",
    ),
    ("h3", "6.3 No connection from hotels or public Wi-Fi"),
    (
        "p",
        "Some networks block UDP port 51820. Switch to the fallback endpoint vpn-alt.northwind.example on port 443 "
        "in the client settings (Settings → Endpoint → Fallback).",
    ),
    ("h3", "6.4 Video calls are slow while on VPN"),
    (
        "p",
        "Only internal networks are routed through the VPN (split tunnel), so video calls should not be affected. "
        "If they are, your configuration may be outdated: download a new one from the self-service portal.",
    ),
    ("h2", "7. Contacting IT"),
    (
        "p",
        "If the steps above don't help, open a ticket at the IT ticket desk, https://help.northwind.example, category "
        '"VPN & Network". Include your client version, operating system, the time the problem occurred and a '
        "screenshot of the error.",
    ),
    (
        "ul",
        [
            "Email: it-desk@northwind.example (creates a ticket automatically).",
            "Phone: +49 30 5555 4357 (internal extension 4357), Monday to Friday 08:00–18:00 CET.",
            "Urgent problems outside these hours: post in #it-help in Slack; the IT on-duty person checks it until 22:00.",
        ],
    ),
    (
        "p",
        "Contractors receive VPN access only when the engaging manager requests it; access ends automatically on "
        "the contract end date.",
    ),
]

# A long handbook exported from a word processor: prose that wraps and hyphenates, paragraphs and
# tables that run across pages, a running header and a page footer, no bookmarks. The title sits
# only in the PDF metadata and the first heading.
RELOCATION_HANDBOOK = [
    ("h1", "Relocation Handbook"),
    (
        "p",
        "People Operations · Version 2026.1 · valid for relocations agreed from 1 March 2026",
    ),
    ("h2", "1. Why this handbook exists"),
    (
        "p",
        "Moving to a new city for a job is exciting, but it is also one of the most stressful things people do. "
        "Between visa appointments, flat viewings in a language you may not speak yet and a container of furniture "
        "somewhere at sea, it is easy to lose track of what the company pays for and what you have to organise "
        "yourself. This handbook brings all of that together in one place. It describes the relocation package "
        "Northwind Cloud offers, the order in which things usually happen, and the people who help you along the "
        "way. It replaces the relocation paragraphs of individual offer letters signed before 1 March 2026, unless "
        "your offer letter explicitly promised something more generous, in which case the offer letter wins.",
    ),
    (
        "p",
        "The handbook is written for the person who moves. Hiring managers and recruiters will find the approval "
        "rules in section 12, and everybody will find a checklist for the first four weeks in the appendix. Where "
        "the handbook refers to other policies, such as the Business Travel Policy or the Leave Policy, those "
        "policies continue to apply in full; this handbook only adds what is specific to a relocation.",
    ),
    ("h2", "2. Who is eligible"),
    (
        "p",
        "You are eligible for relocation support if Northwind hires you into a role that requires you to move to "
        "Berlin or Shanghai, or asks you to move there, and all of the following apply: your new place of work is "
        "more than 100 km away from where you live when you accept the offer; you have an employment contract "
        "with a Northwind entity that runs for at least 12 months or has no end date; and your move takes place "
        "within 6 months of your start date. If your start date is postponed, for example because a visa takes "
        "longer than expected, the 6 months are counted from the postponed start date.",
    ),
    (
        "p",
        "Internal transfers between the Berlin, Kyiv and Shanghai offices are treated like new hires, with the "
        "differences described in section 11. Relocations into the Kyiv office are currently accepted only as "
        "internal transfers, and they need the approval of the Security team in addition to the usual approvals "
        "in section 12.",
    ),
    (
        "p",
        "Relocation support is not available to contractors, freelancers or agency staff, whatever the length of "
        "their engagement. If a contractor needs to work on site for a longer period, the engaging manager plans "
        "the travel and the hotel under the Expense Policy for Contractors. Interns and working students on "
        "contracts shorter than 12 months receive the journey to the new location described in section 5 and up "
        "to 30 nights of temporary housing, but no relocation allowance and no shipment of household goods.",
    ),
    ("h2", "3. Your relocation at a glance"),
    (
        "p",
        "Every relocation follows the same broad sequence. The exact dates depend on your visa, your family "
        "situation and the housing market, but most moves to Berlin take between eight and fourteen weeks from "
        "the signed offer to the first day in the office. Moves to Shanghai usually take longer, because the work "
        "permit has to be approved before the residence permit can be applied for, and both steps are done one "
        "after the other by the authorities.",
    ),
    (
        "table",
        [
            ["Step", "Who", "Typical timing"],
            [
                "Kick-off call with your relocation consultant",
                "MoveWell",
                "within 5 working days of the signed offer",
            ],
            ["Visa and work permit application", "MoveWell and People Operations", "weeks 1 to 8"],
            ["House-hunting trip (optional)", "You, with MoveWell", "2 to 4 weeks before the move"],
            ["Shipment of household goods", "MoveWell's moving company", "the week of the move"],
            ["Temporary housing", "MoveWell", "from the day you arrive"],
            [
                "Registration, tax ID and bank account",
                "You, with MoveWell",
                "first 2 weeks after arrival",
            ],
            ["Relocation allowance paid", "Payroll", "with your first salary"],
        ],
    ),
    (
        "p",
        "Our relocation partner is MoveWell Relocation GmbH. After you sign your offer, People Operations "
        "introduces you to a personal relocation consultant at MoveWell, who stays your contact until you have "
        "moved into a permanent home. MoveWell works on Northwind's instructions: if the consultant suggests "
        "something that this handbook does not cover, check with People Operations before you commit to it, "
        "because Northwind only pays for what is described here or written into your offer letter.",
    ),
    ("h2", "4. Visas and work permits"),
    (
        "p",
        "Colleagues who are not citizens of an EU or EEA country need a visa and a work permit before they can "
        "start in Berlin. Most receive an EU Blue Card. Northwind uses the accelerated procedure for skilled "
        "workers, which shortens the wait for an appointment at the German embassy to about three weeks in most "
        "countries. Northwind pays the fee for the accelerated procedure of 411 EUR and all visa and permit fees "
        "for you and for the family members who move with you. Your start date is only confirmed once the visa "
        "has been granted; until then, please do not give notice on your current flat.",
    ),
    (
        "p",
        "For Shanghai, the local entity applies for the work permit notification before you travel, and you "
        "enter China on a work visa. The steps after arrival are described in section 9.2. MoveWell's "
        "immigration team prepares the applications, translates and certifies your documents and tells you "
        "which originals you need to bring; the costs of translations, certified copies and apostilles are "
        "covered by the relocation allowance.",
    ),
    ("h2", "5. The relocation allowance"),
    (
        "p",
        "The relocation allowance is a lump sum for the many small costs of a move that are hard to itemise: new "
        "furniture and appliances, adapters, deposits for utilities, the first weeks of a public transport "
        "ticket, fees for translations and certified copies, and so on. You do not need to show receipts for it, "
        "and you do not have to pay any of it back once you have stayed with Northwind long enough (see section "
        "10). The amount depends on where you move from and to:",
    ),
    (
        "table",
        [
            ["Move", "Relocation allowance", "Household goods", "Temporary housing"],
            ["Within Germany (more than 100 km)", "2,000 EUR", "up to 20 m³", "up to 30 nights"],
            [
                "From another EU or EEA country to Berlin",
                "4,000 EUR",
                "up to 30 m³",
                "up to 45 nights",
            ],
            [
                "From outside the EU or EEA to Berlin",
                "6,000 EUR",
                "up to 40 m³",
                "up to 60 nights",
            ],
            ["To Shanghai, from any country", "7,500 EUR", "up to 40 m³", "up to 60 nights"],
        ],
    ),
    (
        "p",
        "If your partner or your children move with you, the allowance increases by 1,000 EUR for each family "
        "member who moves with you and lives in your household, up to a family supplement of 3,000 EUR in total. "
        "Please tell People Operations who is moving with you before the first payroll run after your start "
        "date; the supplement cannot be added retroactively after your third month with Northwind.",
    ),
    (
        "p",
        "The allowance is paid with your first regular salary as a gross amount. In Germany it is taxable income "
        "and subject to social security contributions, so what arrives in your bank account will be noticeably "
        "less than the figure in the table. Northwind does not gross up the allowance. Some of the moving costs "
        "that you pay yourself can be deducted in your income tax return; the tax advice described in section "
        "9.5 is the right place to find out which ones.",
    ),
    ("h3", "5.1 Who counts as family"),
    (
        "p",
        "For the family supplement and for everything else in this handbook that mentions family members, "
        "your family is your spouse or registered partner and your children under 18, or under 25 if they are "
        "still in education, provided they live in your household and move with you within 6 months of your "
        "own move. Partners who are not married or registered count as family if you have lived together for "
        "at least one year before the move; MoveWell will ask for a shared rental contract or a similar "
        "document as evidence.",
    ),
    ("h3", "5.2 Leaving your current home"),
    (
        "p",
        "Give notice on your current flat only once your start date is confirmed. Because notice periods on "
        "rented flats are often three months, many people end up paying rent for two homes for a while. If "
        "that happens, Northwind pays the rent of your old home for up to two months of overlap, at most 2,500 "
        "EUR in total, against a copy of the rental contract and the notice letter. Cleaning, repairs and "
        "renovation of the old flat that your lease requires when you move out are your own costs; the "
        "relocation allowance is meant to help with them.",
    ),
    ("h2", "6. Getting there"),
    ("h3", "6.1 The journey to your new home"),
    (
        "p",
        "Northwind pays one-way travel to the new location for you and for every family member who moves with "
        "you. Flights are booked by MoveWell through our travel agency TravelNest and follow the class-of-travel "
        "rules of the Business Travel Policy, so you fly economy on flights under 6 hours and premium economy on "
        "longer ones. Up to two additional checked bags per person are covered on the moving flight, because "
        "most people arrive with far more luggage than a business traveller. If you prefer to travel by train "
        "or to drive your own car, Northwind reimburses the cost up to what the flights would have cost.",
    ),
    ("h3", "6.2 House-hunting trip"),
    (
        "p",
        "Before the move you can make one house-hunting trip of up to three days to the new city, together with "
        "your partner if they will move with you. Northwind pays the travel and up to two hotel nights within "
        "the hotel caps of the Business Travel Policy, and MoveWell arranges a day of accompanied viewings. The "
        "house-hunting trip is optional. Many people prefer to look for a flat while they live in temporary "
        "housing, and there is no cash alternative if you do not take the trip.",
    ),
    ("h2", "7. Household goods"),
    (
        "p",
        "MoveWell's moving company packs, ships and unpacks your household goods up to the volume shown in the "
        "table in section 5. The volume is estimated by the moving company during a video survey of your "
        "current home; most one-bedroom flats come to between 15 and 20 m³, and a family home often to 35 m³ or "
        "more. Shipments to Berlin go by road within Europe and by sea from elsewhere. Sea shipments take six to "
        "ten weeks from door to door, so plan to live without your own furniture for a while; temporary housing "
        "is furnished for exactly this reason. Storage of up to 60 days is included if your permanent home is "
        "not ready when the shipment arrives.",
    ),
    (
        "p",
        "Some things cannot be shipped at Northwind's cost: cars, motorbikes and boats; plants; wine "
        "collections and other goods that need import licences; and the disposal of furniture you leave "
        "behind. Transport insurance for the shipment is included up to a declared value of 50,000 EUR. If you "
        "want a higher cover, you can buy it through MoveWell at your own cost before the packing day.",
    ),
    (
        "p",
        "Shipments from outside the EU have to clear customs. Household goods are free of import duty if you "
        "have owned and used them for at least six months before the move and register your address in "
        "Germany within twelve months; MoveWell's moving company prepares the customs declaration, and you "
        "sign it. New items that are still in their packaging are treated as imports and may be taxed, so keep "
        "the receipts of anything you bought shortly before the move. Import duty charged on your household "
        "goods is paid by Northwind; duty on new goods is not.",
    ),
    ("h2", "8. Temporary housing and your permanent home"),
    ("h3", "8.1 Temporary housing"),
    (
        "p",
        "From the day you arrive you can live in a furnished serviced apartment booked by MoveWell, for the "
        "number of nights shown in section 5. Northwind pays the rent of the apartment directly, including "
        "utilities, internet and the final cleaning. Apartments are chosen to be within 45 minutes of the "
        "office by public transport and large enough for the family members who move with you.",
    ),
    (
        "p",
        "If you have not found a permanent home before your temporary housing ends, the Head of People can "
        "extend it once by up to 15 nights when you can show that you have been looking actively, for example "
        "with a list of viewings and applications. After that, or if you simply choose to stay longer in the "
        "apartment, you pay the rent yourself at the rate MoveWell has negotiated. Temporary housing is not paid "
        "out in cash if you stay with friends or family instead.",
    ),
    ("h3", "8.2 Finding a flat"),
    (
        "p",
        "Renting a flat in Berlin is notoriously hard, and Shanghai has its own rules. MoveWell's home-search "
        "service supports you from the first search profile to the signed lease: it pre-selects offers, "
        "arranges viewings, accompanies you on two viewing days, checks the rental contract with you in English "
        "and helps with the handover protocol on the day you move in. In Berlin the landlord usually pays the "
        "estate agent, so you should not be asked for a broker's fee; if an agent asks you for one, talk to "
        "your consultant before you pay anything.",
    ),
    ("h3", "8.3 Renting in Shanghai"),
    (
        "p",
        "In Shanghai, landlords usually ask for a deposit of two months' rent and for the rent to be paid three "
        "months in advance, and the estate agent charges a fee that is often between 35% and 100% of one "
        "month's rent. Northwind pays the agent's fee in Shanghai up to the amount of one month's rent. "
        "MoveWell's Shanghai partner also checks that the landlord can issue an official invoice (fapiao) and "
        "that the flat is registered for foreign tenants, which the residence permit requires.",
    ),
    ("h3", "8.4 Rent deposit loan"),
    (
        "p",
        "Most landlords ask for a deposit of up to three months' basic rent, which is a lot of money to find in "
        "the first weeks of a new job. Northwind can lend you the deposit as an interest-free rent deposit loan "
        "of up to three monthly basic rents, at most 6,000 EUR. The loan is repaid in twelve equal monthly "
        "instalments that are deducted from your net salary, starting in the month after the payout. If you "
        "leave Northwind before the loan is repaid, the remaining amount is deducted from your final salary.",
    ),
    ("h2", "9. Settling in"),
    ("h3", "9.1 Registration and paperwork in Germany"),
    (
        "p",
        "In Germany you must register your new address at the citizens' office (Bürgeramt) within 14 days of "
        "moving in, including when you move into temporary housing. The registration certificate is the key to "
        "almost everything else: your tax identification number is sent to you by post about two weeks after "
        "registration, and banks usually open an account only once you can show the certificate. MoveWell books "
        "the appointment for you and sends someone along who speaks German. Please give People Operations your "
        "tax ID as soon as it arrives. Until payroll has it, the highest tax class has to be applied to your "
        "salary, and although the difference is refunded later, your first net salary may be lower than you "
        "expected.",
    ),
    (
        "p",
        "Health insurance is mandatory in Germany from your first working day. If you come from outside the EU, "
        "MoveWell helps you choose a statutory health insurance fund before you travel, so that the membership "
        "confirmation needed for the visa is ready in time. The supplementary insurance described in the "
        "Benefits Overview starts in your first month, as it does for everyone else.",
    ),
    ("h3", "9.2 Residence permit in Shanghai"),
    (
        "p",
        "In Shanghai you register at the local police station within 24 hours of arrival; MoveWell's partner "
        "in Shanghai does this with you while you live in temporary housing. You then have 30 days to apply for "
        "the residence permit. A medical examination at an approved clinic is part of the process. Do not "
        "travel outside mainland China while your passport is with the authorities for the residence permit, "
        "which usually takes about three weeks.",
    ),
    ("h3", "9.3 Driving licences"),
    (
        "p",
        "A driving licence from an EU or EEA country remains valid in Germany. A licence from any other country "
        "is valid for 6 months after you register your address, and after that you need a German licence. "
        "Northwind pays the official fees for exchanging the licence, but not driving lessons or tests.",
    ),
    ("h3", "9.4 Language and integration"),
    (
        "p",
        "Everyone who relocates can attend an intensive German or Mandarin course during the first year after "
        "the move, paid by Northwind up to 1,500 EUR. This comes on top of your personal learning budget. A "
        "partner who moves with you can join a course of the same kind at Northwind's cost, up to 750 EUR. You "
        "and your partner are also invited to a one-day intercultural training in the first three months, "
        "which MoveWell schedules for you.",
    ),
    (
        "p",
        "Partners who would like to work in the new country can use two career-coaching sessions with "
        "MoveWell's partner network, which also explains the rules for partners' work permits. For children, "
        "MoveWell gives you a list of schools and kindergartens with places for newcomers and helps with the "
        "applications. Northwind does not pay school fees.",
    ),
    ("h3", "9.5 Tax advice"),
    (
        "p",
        "Your first tax return in a new country is complicated. Northwind pays for up to two hours of advice "
        "with our tax advisers, Weber & Partner, during the year of your move and for the tax return that "
        "covers it. The advice is confidential: Weber & Partner does not share anything you discuss with "
        "Northwind.",
    ),
    ("h3", "9.6 Time off for the move"),
    (
        "p",
        "For the move itself you receive two paid relocation days, to be taken within the first three months "
        "after your start date. They are separate from your vacation entitlement and are requested in "
        "PeoplePort as Special leave with the reason Relocation. They are granted once per relocation; the day "
        "for moving house in the Leave Policy is meant for ordinary moves and is not granted in addition.",
    ),
    ("h2", "10. If you leave within two years"),
    (
        "p",
        "Relocation is an investment, and we ask for part of it back if you leave soon after the move. If you "
        "resign, or if Northwind terminates your contract for reasons related to your conduct, within 24 months "
        "of your start date, you repay the relocation allowance and the cost of the household goods shipment "
        "according to the following scale:",
    ),
    (
        "table",
        [
            ["You leave", "Share you repay"],
            ["within the first 12 months", "100%"],
            ["in months 13 to 24", "50%"],
            ["after 24 months", "nothing"],
        ],
    ),
    (
        "p",
        "Nothing has to be repaid if Northwind ends your contract for business reasons, if your contract ends "
        "because your visa or permit is refused, or if you move to another Northwind office at the company's "
        "request. The repayment is deducted from your final salary as far as the law allows, and any remaining "
        "amount is invoiced. Temporary housing, travel, language courses and tax advice are never reclaimed.",
    ),
    ("h2", "11. Internal transfers"),
    (
        "p",
        "If you apply for a role in another Northwind office, you need at least 12 months in your current role "
        "and your current manager's agreement that the transfer date works for the team. Transfers are normally "
        "agreed for the first day of a month, with at least 8 weeks between the approval and the start in the "
        "new office, so that your current team has time to plan the handover.",
    ),
    (
        "p",
        "Internal transfers receive the same package as new hires, with three differences. First, the "
        "relocation allowance is paid at half the rate in the table in section 5, because you are already set "
        "up with a Northwind laptop, accounts and benefits. Second, the house-hunting trip is extended to five "
        "days, and you can work from the new office during that week. Third, your salary is reset to the band "
        "of your level in the new location, using the location factor that applies there; your HR business "
        "partner tells you the new salary in writing before you accept the transfer. Your years of service, "
        "your vacation balance and, where the law allows it, your pension arrangements move with you.",
    ),
    ("h2", "12. Approvals and budgets"),
    (
        "p",
        "Relocation packages are paid from the hiring budget of the department that hires. The hiring manager "
        "requests the package in the offer workflow in PeoplePort. The approvals depend on the total estimated "
        "cost of the relocation, which MoveWell calculates after the kick-off call:",
    ),
    (
        "table",
        [
            ["Estimated total cost", "Approval"],
            ["up to 15,000 EUR", "Head of People"],
            ["15,001 to 30,000 EUR", "Head of People and the department head"],
            ["above 30,000 EUR", "Head of People, the department head and the CFO"],
        ],
    ),
    (
        "p",
        "Anything outside this handbook, such as a longer temporary housing period agreed at the time of the "
        "offer, a contribution to school fees or a second house-hunting trip, is an exception. Exceptions must "
        "be written into the offer letter and approved by the Head of People before the offer is sent; they "
        "cannot be agreed verbally by the hiring manager, and MoveWell will not act on them otherwise.",
    ),
    ("h2", "13. Questions people often ask"),
    ("h3", "Can I take the allowance as a higher salary instead?"),
    (
        "p",
        "No. The relocation allowance is a one-off payment and cannot be converted into a higher base salary, "
        "a signing bonus or extra vacation days.",
    ),
    ("h3", "What happens if my visa is refused?"),
    (
        "p",
        "Your contract ends before it starts or, if you have already started remotely, at the end of the "
        "notice period, and nothing that Northwind has paid for your relocation has to be repaid.",
    ),
    ("h3", "Can I bring my car?"),
    (
        "p",
        "You can, but shipping a vehicle is not part of the package. If you drive your own car to Berlin "
        "instead of flying, the journey itself is reimbursed as described in section 6.1.",
    ),
    ("h3", "Who do I ask when something goes wrong during the move?"),
    (
        "p",
        "Call the MoveWell hotline first for anything urgent, such as a delayed shipment or a problem with the "
        "apartment keys. For questions about what Northwind pays, write to People Operations.",
    ),
    ("h2", "14. Contacts"),
    (
        "ul",
        [
            "People Operations: relocation@northwind.example, answered within 2 working days.",
            "MoveWell hotline, 24/7 during your move: +49 30 5555 6400.",
            "The #relocation Slack channel, where colleagues who moved in the last year share tips.",
        ],
    ),
    ("page",),
    ("h2", "Appendix: your first four weeks"),
    (
        "ol",
        [
            "Day 1: collect the keys of your temporary apartment from MoveWell and check the inventory list.",
            "Week 1: register your address (Berlin: Bürgeramt; Shanghai: police station within 24 hours).",
            "Week 1: first day in the office; IT hands out your laptop and People Operations checks your papers.",
            "Week 2: open a bank account and send your bank details to People Operations for payroll.",
            "Week 3: send your tax ID to People Operations as soon as it arrives by post.",
            "Week 4: book your language course and the intercultural training with MoveWell.",
        ],
    ),
]

# --------------------------------------------------------------------------------------
# PDF rendering
# --------------------------------------------------------------------------------------


def _pdf_styles() -> dict[str, ParagraphStyle]:
    base = getSampleStyleSheet()
    return {
        "h1": ParagraphStyle(
            "h1",
            parent=base["Heading1"],
            fontSize=18,
            spaceAfter=8,
            textColor=colors.HexColor("#1f3a5f"),
        ),
        "h2": ParagraphStyle(
            "h2",
            parent=base["Heading2"],
            fontSize=13.5,
            spaceBefore=10,
            spaceAfter=5,
            textColor=colors.HexColor("#1f3a5f"),
        ),
        "h3": ParagraphStyle(
            "h3", parent=base["Heading3"], fontSize=11, spaceBefore=7, spaceAfter=3
        ),
        "p": ParagraphStyle(
            "p",
            parent=base["BodyText"],
            fontSize=9.8,
            leading=13.5,
            alignment=TA_LEFT,
            spaceAfter=5,
        ),
        "cell": ParagraphStyle("cell", parent=base["BodyText"], fontSize=9, leading=11.5),
        "cellh": ParagraphStyle(
            "cellh",
            parent=base["BodyText"],
            fontSize=9,
            leading=11.5,
            fontName="Helvetica-Bold",
            textColor=colors.white,
        ),
    }


def _table(rows: list[list[str]], st: dict[str, ParagraphStyle], width: float) -> Table:
    data = [
        [Paragraph(escape(c), st["cellh"] if i == 0 else st["cell"]) for c in row]
        for i, row in enumerate(rows)
    ]
    ncol = len(rows[0])
    if ncol == 2:
        widths = [width * 0.55, width * 0.45]
    elif ncol == 3:
        widths = (
            [width * 0.34, width * 0.22, width * 0.44]
            if rows[0][1] in ("Factor", "Label")
            else [width / 3] * 3
        )
        if rows[0][1] == "Label":
            widths = [width * 0.12, width * 0.30, width * 0.58]
    else:
        widths = [width * 0.10, width * 0.42, width * 0.28, width * 0.20]
    t = Table(data, colWidths=widths, repeatRows=1)
    t.setStyle(
        TableStyle(
            [
                ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#1f3a5f")),
                ("GRID", (0, 0), (-1, -1), 0.4, colors.HexColor("#9aa5b1")),
                ("ROWBACKGROUNDS", (0, 1), (-1, -1), [colors.white, colors.HexColor("#f1f4f8")]),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("TOPPADDING", (0, 0), (-1, -1), 3),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 3),
            ]
        )
    )
    return t


def _list(items: list[str], st: dict[str, ParagraphStyle], ordered: bool) -> ListFlowable:
    flow = [ListItem(Paragraph(escape(i), st["p"]), leftIndent=12) for i in items]
    if ordered:
        return ListFlowable(
            flow,
            bulletType="1",
            start="1",
            leftIndent=14,
            bulletFontSize=9.5,
            bulletFontName="Helvetica",
            bulletFormat="%s.",
        )
    return ListFlowable(
        flow,
        bulletType="bullet",
        start="–",
        leftIndent=14,
        bulletFontSize=9,
        bulletFontName="Helvetica",
    )


def build_pdf(path: Path, blocks: list[tuple], title: str, footer: str) -> None:
    st = _pdf_styles()
    doc = SimpleDocTemplate(
        str(path),
        pagesize=A4,
        invariant=1,
        leftMargin=20 * mm,
        rightMargin=20 * mm,
        topMargin=22 * mm,
        bottomMargin=20 * mm,
        title=title,
        author="Northwind Cloud GmbH",
        subject=title,
        creator="Northwind Cloud document templates",
    )
    width = doc.width
    story = []
    for block in blocks:
        kind = block[0]
        if kind in ("h1", "h2", "h3", "p"):
            story.append(Paragraph(escape(block[1]), st[kind]))
        elif kind in ("ul", "ol"):
            story.append(_list(block[1], st, ordered=kind == "ol"))
            story.append(Spacer(1, 3))
        elif kind == "table":
            story.append(KeepTogether([_table(block[1], st, width), Spacer(1, 6)]))
        elif kind == "page":
            story.append(PageBreak())
        else:  # pragma: no cover - content error
            raise ValueError(kind)

    def decorate(canvas, d):
        canvas.saveState()
        canvas.setFont("Helvetica", 8)
        canvas.setFillColor(colors.HexColor("#5f6b7a"))
        canvas.drawString(20 * mm, A4[1] - 12 * mm, f"Northwind Cloud · {title}")
        canvas.drawString(20 * mm, 11 * mm, footer)
        canvas.drawRightString(A4[0] - 20 * mm, 11 * mm, f"Page {d.page}")
        canvas.restoreState()

    doc.build(story, onFirstPage=decorate, onLaterPages=decorate)


# --------------------------------------------------------------------------------------
# "Word export" PDF rendering: what a word processor's "Save as PDF" gives for long prose
# --------------------------------------------------------------------------------------

_VOWELS = set("aeiouy")
_DIGRAPHS = {"ch", "ck", "gh", "ph", "sh", "th", "wh"}


def _hyphenation_points(word: str):
    """Break points for ``word``, longest head first, as a word processor's automatic
    hyphenation would offer them: lower-case words of 8+ letters, between two consonants
    (VC-CV, never inside "th", "ch" ...), never leaving fewer than 4 letters on either side.
    Capitalised words, names and numbers are never broken."""
    if len(word) < 8 or not word.isalpha() or not word.islower():
        return
    for i in range(len(word) - 4, 3, -1):
        a, b = word[i - 1], word[i]
        if (
            a not in _VOWELS
            and b not in _VOWELS
            and word[i - 2] in _VOWELS
            and word[i + 1] in _VOWELS
            and a + b not in _DIGRAPHS
        ):
            yield word[:i], word[i:]


def _export_styles() -> dict[str, ParagraphStyle]:
    base = getSampleStyleSheet()
    body = ParagraphStyle(
        "p",
        parent=base["BodyText"],
        fontName="Helvetica",
        fontSize=11,
        leading=15,
        spaceAfter=8,
        alignment=TA_LEFT,
        hyphenationLang=_hyphenation_points,
        allowWidows=1,
        allowOrphans=1,
    )
    return {
        "h1": ParagraphStyle(
            "h1", parent=base["Heading1"], fontName="Helvetica-Bold", fontSize=20, spaceAfter=6
        ),
        "h2": ParagraphStyle(
            "h2",
            parent=base["Heading2"],
            fontName="Helvetica-Bold",
            fontSize=14,
            spaceBefore=12,
            spaceAfter=6,
        ),
        "h3": ParagraphStyle(
            "h3",
            parent=base["Heading3"],
            fontName="Helvetica-Bold",
            fontSize=11.5,
            spaceBefore=8,
            spaceAfter=4,
        ),
        "p": body,
        "cell": ParagraphStyle("cell", parent=body, fontSize=10, leading=13, spaceAfter=0),
        "cellh": ParagraphStyle(
            "cellh", parent=body, fontName="Helvetica-Bold", fontSize=10, leading=13, spaceAfter=0
        ),
    }


def _export_table(rows: list[list[str]], st: dict[str, ParagraphStyle], width: float) -> Table:
    data = [
        [Paragraph(escape(c), st["cellh"] if i == 0 else st["cell"]) for c in row]
        for i, row in enumerate(rows)
    ]
    ncol = len(rows[0])
    first = 0.40 if ncol > 2 else 0.5
    widths = [width * first] + [width * (1 - first) / (ncol - 1)] * (ncol - 1)
    t = Table(data, colWidths=widths, repeatRows=1)
    t.setStyle(
        TableStyle(
            [
                ("LINEABOVE", (0, 0), (-1, 0), 0.8, colors.black),
                ("LINEBELOW", (0, 0), (-1, 0), 0.5, colors.black),
                ("LINEBELOW", (0, -1), (-1, -1), 0.8, colors.black),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("TOPPADDING", (0, 0), (-1, -1), 3),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 3),
            ]
        )
    )
    return t


def _export_story(blocks: list[tuple], st: dict[str, ParagraphStyle], width: float) -> list:
    story: list = []
    for i, block in enumerate(blocks):
        kind = block[0]
        if kind in ("h2", "h3"):
            # "Keep with next" as word processors do it: a heading stays with the first lines of
            # what follows (a sub-heading too), and the paragraph may still run on to the next page.
            below = blocks[i + 1][0] if i + 1 < len(blocks) else ""
            story.append(CondPageBreak(90 if below == "h3" else 55))
            story.append(Paragraph(escape(block[1]), st[kind]))
        elif kind in ("h1", "p"):
            story.append(Paragraph(escape(block[1]), st[kind]))
        elif kind in ("ul", "ol"):
            story.append(_list(block[1], st, ordered=kind == "ol"))
            story.append(Spacer(1, 4))
        elif kind == "table":
            story.append(_export_table(block[1], st, width))
            story.append(Spacer(1, 8))
        elif kind == "page":
            story.append(PageBreak())
        else:  # pragma: no cover - content error
            raise ValueError(kind)
    return story


def build_exported_pdf(path: Path, blocks: list[tuple], title: str, header: str) -> None:
    """Like a word processor's PDF export: wrapped and hyphenated lines, paragraphs and tables
    that continue on the next page, ``header`` on top of every page and "Page N of M" below, no
    bookmarks. The title is only in the metadata and the first heading."""
    st = _export_styles()

    def render(total: int) -> tuple[bytes, int]:
        buf = io.BytesIO()
        doc = BaseDocTemplate(
            buf,
            pagesize=A4,
            invariant=1,
            leftMargin=25 * mm,
            rightMargin=25 * mm,
            topMargin=25 * mm,
            bottomMargin=22 * mm,
            title=title,
            author="Northwind Cloud GmbH",
            creator="Microsoft Word",
        )

        def running_header(canvas, d):
            canvas.saveState()
            canvas.setFont("Helvetica", 9)
            canvas.drawString(25 * mm, A4[1] - 14 * mm, header)
            canvas.restoreState()

        def page_footer(canvas, d):  # drawn after the body, as word processors write it
            canvas.saveState()
            canvas.setFont("Helvetica", 9)
            canvas.drawCentredString(A4[0] / 2, 12 * mm, f"Page {d.page} of {total}")
            canvas.restoreState()

        frame = Frame(doc.leftMargin, doc.bottomMargin, doc.width, doc.height, id="body")
        doc.addPageTemplates(
            [PageTemplate("page", [frame], onPage=running_header, onPageEnd=page_footer)]
        )
        doc.build(_export_story(blocks, st, doc.width))
        return buf.getvalue(), doc.page

    data, pages = render(0)
    data, _ = render(pages)
    path.write_bytes(data)


# --------------------------------------------------------------------------------------
# DOCX rendering
# --------------------------------------------------------------------------------------


def build_docx(path: Path, blocks: list[tuple], title: str, author: str) -> None:
    doc = Document()
    normal = doc.styles["Normal"]
    normal.font.name = "Calibri"
    normal.font.size = Pt(10.5)
    for block in blocks:
        kind = block[0]
        if kind == "h1":
            doc.add_heading(block[1], level=0)
        elif kind == "h2":
            doc.add_heading(block[1], level=1)
        elif kind == "h3":
            doc.add_heading(block[1], level=2)
        elif kind == "p":
            doc.add_paragraph(block[1])
        elif kind == "ul":
            for item in block[1]:
                doc.add_paragraph(item, style="List Bullet")
        elif kind == "ol":
            for item in block[1]:
                doc.add_paragraph(item, style="List Number")
        elif kind == "table":
            rows = block[1]
            table = doc.add_table(rows=len(rows), cols=len(rows[0]))
            table.style = "Light Grid Accent 1"
            for r, row in enumerate(rows):
                for c, text in enumerate(row):
                    cell = table.cell(r, c)
                    cell.text = text
                    if r == 0:
                        for run in cell.paragraphs[0].runs:
                            run.bold = True
            doc.add_paragraph()
        else:  # pragma: no cover - content error
            raise ValueError(kind)
    footer = doc.sections[0].footer.paragraphs[0]
    footer.text = f"Northwind Cloud · {title} · Internal"
    footer.alignment = WD_ALIGN_PARAGRAPH.CENTER
    for run in footer.runs:
        run.font.size = Pt(8)
        run.font.color.rgb = RGBColor(0x5F, 0x6B, 0x7A)

    props = doc.core_properties
    props.title = title
    props.author = author
    props.last_modified_by = author
    props.created = FIXED_TIME
    props.modified = FIXED_TIME
    props.revision = 1
    props.comments = ""

    buf = io.BytesIO()
    doc.save(buf)
    _normalise_zip(buf.getvalue(), path)


def _normalise_zip(data: bytes, path: Path) -> None:
    """Rewrite the package with fixed timestamps so reruns are byte-identical."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            zi = zipfile.ZipInfo(info.filename, date_time=ZIP_TIME)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = 0o644 << 16
            dst.writestr(zi, src.read(info.filename))
    path.write_bytes(out.getvalue())


def main() -> None:
    build_pdf(
        ROOT / "hr" / "salary-bands.pdf",
        SALARY_BANDS,
        "Salary Bands 2026",
        "Strictly confidential – People Operations only",
    )
    build_pdf(
        ROOT / "finance" / "expense-policy-contractors.pdf",
        CONTRACTOR_EXPENSES,
        "Expense Policy for Contractors",
        "Finance · for contractors and engaging managers",
    )
    build_pdf(
        ROOT / "managers" / "performance-review-guide.pdf",
        PERFORMANCE_REVIEW,
        "Performance Review Guide for Managers",
        "Confidential – people managers only",
    )
    build_exported_pdf(
        ROOT / "hr" / "relocation-handbook.pdf",
        RELOCATION_HANDBOOK,
        "Relocation Handbook",
        "Northwind Cloud GmbH",
    )
    build_docx(
        ROOT / "hr" / "benefits-overview.docx",
        BENEFITS,
        "Benefits Overview 2026",
        "People Operations",
    )
    build_docx(
        ROOT / "it" / "vpn-setup.docx", VPN_SETUP, "VPN Setup Guide (WireGuard)", "IT Services"
    )
    for p in sorted(ROOT.rglob("*")):
        if p.suffix in (".pdf", ".docx"):
            print(f"{p.relative_to(ROOT)}  {p.stat().st_size:>7} bytes")


if __name__ == "__main__":
    main()
